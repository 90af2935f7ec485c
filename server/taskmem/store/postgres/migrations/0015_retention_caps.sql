-- SQLite's 0026_retention_caps.sql: what a count cap applies to, and the indexes that count and pick it
-- (capped an integer as there, so the same literal test selects the partial index on both engines).
ALTER TABLE memory_entries ADD COLUMN IF NOT EXISTS capped SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS capped SMALLINT NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS memory_entries_capped ON memory_entries (namespace, created_at, seq, expires_at, capped)
    WHERE capped = 1;
CREATE INDEX IF NOT EXISTS messages_capped ON messages (namespace, created_at, id, expires_at, capped)
    WHERE capped = 1;
CREATE INDEX IF NOT EXISTS events_of_capped_entries ON events (namespace, created_at)
    WHERE type = 'EVENT_TYPE_MEMORY_ENTRY_ADDED';
CREATE INDEX IF NOT EXISTS events_of_capped_messages ON events (namespace, created_at)
    WHERE type = 'EVENT_TYPE_MESSAGE_POSTED';
