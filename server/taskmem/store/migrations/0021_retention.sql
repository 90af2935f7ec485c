-- Retention (issue 29, point 2): a memory entry may expire (its own expire_time, or the TTL configured
-- for its namespace when it was written); from that instant no read returns it, and maintenance deletes
-- it later in bounded pages. NULL: never expires.
ALTER TABLE memory_entries ADD COLUMN expires_at INTEGER;
CREATE INDEX memory_entries_expiring ON memory_entries (expires_at) WHERE expires_at IS NOT NULL;
-- The event that carried an expiring item expires with it: from then on reads return it as a tombstone
-- (cursor, type, task and the item's id; no content), so a stream replayed later has no gap and shows
-- nothing expired. Maintenance strips the stored payload, then sets expires_at to 0 (tombstoned: still
-- expired for reads, out of this index's range of work).
ALTER TABLE events ADD COLUMN expires_at INTEGER;
CREATE INDEX events_expiring ON events (expires_at) WHERE expires_at IS NOT NULL;
