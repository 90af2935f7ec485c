-- Count caps (issue 29, point 2): retention.NS.memory_entries_max / messages_max bound a namespace's live
-- items of the kind; a write past the cap expires the oldest at once (store/retention_caps.py). `capped`
-- marks the items a cap applies to (core.retention.entry_capped / message_capped: not pinned, not of an
-- exempt type or kind), stamped at write time because pinned is not otherwise stored. Rows written before
-- this migration stay 0 (one cannot tell a pinned one), so a cap neither counts nor pushes them out.
ALTER TABLE memory_entries ADD COLUMN capped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN capped INTEGER NOT NULL DEFAULT 0;
-- The count and the oldest-first pick of a namespace's live capped items, index-only: expires_at and capped
-- are columns too (without capped SQLite visits every row to test the condition it already implies).
CREATE INDEX memory_entries_capped ON memory_entries (namespace, created_at, seq, expires_at, capped)
    WHERE capped = 1;
CREATE INDEX messages_capped ON messages (namespace, created_at, id, expires_at, capped) WHERE capped = 1;
-- A pushed-out item's event expires with it: found by its namespace and time (the item's created_at is its
-- event's), then by the id in its payload. Only the two event types a cap reaches are indexed.
CREATE INDEX events_of_capped_entries ON events (namespace, created_at) WHERE type = 'EVENT_TYPE_MEMORY_ENTRY_ADDED';
CREATE INDEX events_of_capped_messages ON events (namespace, created_at) WHERE type = 'EVENT_TYPE_MESSAGE_POSTED';
