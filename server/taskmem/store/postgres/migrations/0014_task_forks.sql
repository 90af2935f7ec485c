-- Forks (issue 28, point 3; as SQLite's 0025): a task made by ForkTask names the task it was forked from
-- and the cursor of that task's event it was taken after ('' and 0 for every other task).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS forked_from TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS forked_at BIGINT NOT NULL DEFAULT 0;

-- A fork's state items keep the links to the memory entries that stated them (the entries stay the
-- original's, shared by reference), so one entry can now link an item in each thread of a lineage: the
-- key gains the thread.
ALTER TABLE state_item_entries DROP CONSTRAINT IF EXISTS state_item_entries_pkey;
ALTER TABLE state_item_entries ADD PRIMARY KEY (namespace, memory_entry_id, thread_id);
