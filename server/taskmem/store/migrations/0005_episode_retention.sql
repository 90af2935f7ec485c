-- Episode retention archives rather than deletes: an archived episode keeps its row.
ALTER TABLE episodes ADD COLUMN archived_at INTEGER;
CREATE INDEX episodes_by_archival ON episodes (namespace, archived_at, created_at, seq);
