-- SQLite's 0021_retention.sql: expiring memory entries and the events that carried them.
ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS expires_at BIGINT;
CREATE INDEX IF NOT EXISTS memory_entries_expiring ON memory_entries (expires_at) WHERE expires_at IS NOT NULL;
ALTER TABLE events ADD COLUMN IF NOT EXISTS expires_at BIGINT;
CREATE INDEX IF NOT EXISTS events_expiring ON events (expires_at) WHERE expires_at > 0;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS expires_at BIGINT;
CREATE INDEX IF NOT EXISTS messages_expiring ON messages (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS action_logs_by_time ON action_logs (namespace, created_at);
ALTER TABLE episodes ADD COLUMN IF NOT EXISTS expires_at BIGINT;
CREATE INDEX IF NOT EXISTS episodes_expiring ON episodes (expires_at) WHERE expires_at IS NOT NULL;
CREATE TABLE IF NOT EXISTS event_retention (
    namespace TEXT COLLATE "C" PRIMARY KEY,
    cursor BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL
);
