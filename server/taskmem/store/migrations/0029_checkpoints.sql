-- Checkpoints (issue 39): an agent framework's saved states (LangGraph checkpoints) and pending writes, kept
-- as steps of a task's record. A checkpoint thread is attached to one task on its first checkpoint.
CREATE TABLE checkpoint_threads (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, thread_id)
) WITHOUT ROWID;
CREATE INDEX checkpoint_threads_by_task ON checkpoint_threads (namespace, task_id);

-- value: the framework's serialised bytes, never parsed; metadata: the JSON object as sent. step, source and
-- run_id are read from it once, at write. expires_at is set when a newer checkpoint supersedes this one in a
-- namespace with a "checkpoints" TTL (core/retention.py): a thread's newest never expires.
CREATE TABLE checkpoints (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    value_type TEXT NOT NULL,
    value BLOB NOT NULL,
    metadata TEXT NOT NULL,
    step INTEGER NOT NULL,
    source TEXT NOT NULL,
    run_id TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id)
);
CREATE INDEX checkpoints_by_id ON checkpoints (namespace, checkpoint_id);
CREATE INDEX checkpoints_by_task ON checkpoints (namespace, task_id, checkpoint_id);
CREATE INDEX checkpoints_by_run ON checkpoints (namespace, run_id) WHERE run_id <> '';
CREATE INDEX checkpoints_by_expiry ON checkpoints (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE checkpoint_writes (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    graph_task_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    value_type TEXT NOT NULL,
    value BLOB NOT NULL,
    graph_task_path TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx)
) WITHOUT ROWID;

-- Store items (issue 39): a framework's namespaced key-value memory (LangGraph's BaseStore). path_key is the
-- path's labels each followed by U+001F, so a path prefix is a range of keys. An indexed item is also a memory
-- entry of the namespace's store task (store_tasks), retired when the item changes.
CREATE TABLE store_items (
    namespace TEXT NOT NULL,
    path_key TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    expires_at INTEGER,
    ttl_us INTEGER,
    memory_entry_id TEXT NOT NULL,
    PRIMARY KEY (namespace, path_key, key)
);
CREATE INDEX store_items_by_entry ON store_items (namespace, memory_entry_id) WHERE memory_entry_id <> '';
CREATE INDEX store_items_by_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE store_tasks (
    namespace TEXT NOT NULL PRIMARY KEY,
    task_id TEXT NOT NULL
);

-- Session items (issue 39): a framework's conversation items (the OpenAI Agents SDK's Session) kept in a task's
-- transcript: each is a message (messages.id = message_id) whose exact JSON is kept here. seq orders a task's
-- items; retracted_at is set by a pop or a clear (the message stays in the transcript).
CREATE TABLE session_items (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    message_id TEXT NOT NULL,
    item TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retracted_at INTEGER,
    PRIMARY KEY (namespace, task_id, seq)
);
