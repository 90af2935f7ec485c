-- Retention (issue 29, point 2): a memory entry may expire (its own expire_time, or the TTL configured
-- for its namespace when it was written); from that instant no read returns it, and maintenance deletes
-- it later in bounded pages. NULL: never expires.
ALTER TABLE memory_entries ADD COLUMN expires_at INTEGER;
CREATE INDEX memory_entries_expiring ON memory_entries (expires_at) WHERE expires_at IS NOT NULL;
-- The event that carried an expiring item expires with it: from then on reads return it as a tombstone
-- (cursor, type, task and the item's id; no content), so a stream replayed later has no gap and shows
-- nothing expired. Maintenance strips the stored payload, then sets expires_at to 0: still expired to
-- every read, and out of this index, which holds only the events still to strip.
ALTER TABLE events ADD COLUMN expires_at INTEGER;
CREATE INDEX events_expiring ON events (expires_at) WHERE expires_at > 0;
-- Messages expire as memory entries do (PostMessage's expire_time, or the namespace's TTL for messages).
ALTER TABLE messages ADD COLUMN expires_at INTEGER;
CREATE INDEX messages_expiring ON messages (expires_at) WHERE expires_at IS NOT NULL;
-- Action log lines expire by their namespace's TTL for action_logs, counted from each line's time, once
-- their action has finished (a running action's log is never cut); this finds the old lines.
CREATE INDEX action_logs_by_time ON action_logs (namespace, created_at);
-- Episodes expire as memory entries do (RecordEpisode's expire_time, or the namespace's TTL for episodes).
ALTER TABLE episodes ADD COLUMN expires_at INTEGER;
CREATE INDEX episodes_expiring ON episodes (expires_at) WHERE expires_at IS NOT NULL;
-- The event log's own TTL (retention.events): per namespace, every event at or below `cursor` is deleted
-- (or about to be, in pages); a read after an older cursor gets one EVENTS_EXPIRED tombstone for the range
-- instead, so a stream learns exactly which cursors are gone.
CREATE TABLE event_retention (
    namespace TEXT PRIMARY KEY,
    cursor INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL
) WITHOUT ROWID;
