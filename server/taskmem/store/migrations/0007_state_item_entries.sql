-- Issue 11: one truth for "where was I?". AddDecision and AddError write a memory entry (the complete
-- history) and reconcile a state item (the current truth); this table links the two, so the views
-- show a state item with the subtask and memory entry that stated it, and BuildContext's memories
-- section can leave out what the state section already says.
CREATE TABLE state_item_entries (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    uid TEXT NOT NULL,             -- the state item the entry was reconciled into (merged or new)
    memory_entry_id TEXT NOT NULL,
    kind TEXT NOT NULL,            -- 'decision' or 'error'
    subtask_id TEXT NOT NULL DEFAULT '',
    detail TEXT NOT NULL DEFAULT '', -- an error's resolution, a decision's detail
    created_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, memory_entry_id)
) WITHOUT ROWID;
CREATE INDEX state_item_entries_by_item ON state_item_entries (namespace, thread_id, uid, created_at);
