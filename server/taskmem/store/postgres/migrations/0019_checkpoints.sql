-- Checkpoints (issue 39; as SQLite's 0029): an agent framework's saved states (LangGraph checkpoints) and
-- pending writes, kept as steps of a task's record. A checkpoint thread is attached to one task on its first checkpoint.
CREATE TABLE IF NOT EXISTS checkpoint_threads (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, thread_id)
);
CREATE INDEX IF NOT EXISTS checkpoint_threads_by_task ON checkpoint_threads (namespace, task_id);

-- value: the framework's serialised bytes, never parsed; metadata: the JSON object as sent. step, source and
-- run_id are read from it once, at write. expires_at is set when a newer checkpoint supersedes this one in a
-- namespace with a "checkpoints" TTL (core/retention.py): a thread's newest never expires.
CREATE TABLE IF NOT EXISTS checkpoints (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL,
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    parent_checkpoint_id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    value_type TEXT COLLATE "C" NOT NULL,
    value BYTEA NOT NULL,
    metadata TEXT NOT NULL,
    step BIGINT NOT NULL,
    source TEXT COLLATE "C" NOT NULL,
    run_id TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT,
    PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id)
);
CREATE INDEX IF NOT EXISTS checkpoints_by_id ON checkpoints (namespace, checkpoint_id);
CREATE INDEX IF NOT EXISTS checkpoints_by_task ON checkpoints (namespace, task_id, checkpoint_id);
CREATE INDEX IF NOT EXISTS checkpoints_by_run ON checkpoints (namespace, run_id) WHERE run_id <> '';
CREATE INDEX IF NOT EXISTS checkpoints_by_expiry ON checkpoints (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS checkpoint_writes (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    checkpoint_ns TEXT COLLATE "C" NOT NULL,
    checkpoint_id TEXT COLLATE "C" NOT NULL,
    graph_task_id TEXT COLLATE "C" NOT NULL,
    idx INTEGER NOT NULL,
    channel TEXT COLLATE "C" NOT NULL,
    value_type TEXT COLLATE "C" NOT NULL,
    value BYTEA NOT NULL,
    graph_task_path TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx)
);

-- Store items (issue 39; as SQLite's 0029): a framework's namespaced key-value memory (LangGraph's BaseStore).
CREATE TABLE IF NOT EXISTS store_items (
    namespace TEXT COLLATE "C" NOT NULL,
    path_key TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    value TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    expires_at BIGINT,
    ttl_us BIGINT,
    memory_entry_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (namespace, path_key, key)
);
CREATE INDEX IF NOT EXISTS store_items_by_entry ON store_items (namespace, memory_entry_id)
    WHERE memory_entry_id <> '';
CREATE INDEX IF NOT EXISTS store_items_by_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS store_tasks (
    namespace TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    task_id TEXT COLLATE "C" NOT NULL
);

-- Session items (issue 39; as SQLite's 0029): a framework's conversation items kept in a task's transcript.
CREATE TABLE IF NOT EXISTS session_items (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    message_id TEXT COLLATE "C" NOT NULL,
    item TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    retracted_at BIGINT,
    PRIMARY KEY (namespace, task_id, seq)
);
