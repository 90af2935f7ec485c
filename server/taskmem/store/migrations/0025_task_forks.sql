-- Forks (issue 28, point 3): a task made by ForkTask names the task it was forked from and the cursor of
-- that task's event it was taken after ('' and 0 for every other task).
ALTER TABLE tasks ADD COLUMN forked_from TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN forked_at INTEGER NOT NULL DEFAULT 0;

-- A fork's state items keep the links to the memory entries that stated them (the entries stay the
-- original's, shared by reference), so one entry can now link an item in each thread of a lineage: the
-- key gains the thread. The table is rebuilt, SQLite having no way to change a primary key in place.
CREATE TABLE state_item_entries_by_thread (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    uid TEXT NOT NULL,
    memory_entry_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    subtask_id TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, memory_entry_id, thread_id)
) WITHOUT ROWID;
INSERT INTO state_item_entries_by_thread (namespace, thread_id, uid, memory_entry_id, kind, subtask_id, detail,
    created_at) SELECT namespace, thread_id, uid, memory_entry_id, kind, subtask_id, detail, created_at
    FROM state_item_entries;
DROP TABLE state_item_entries;
ALTER TABLE state_item_entries_by_thread RENAME TO state_item_entries;
CREATE INDEX state_item_entries_by_item ON state_item_entries (namespace, thread_id, uid, created_at);
