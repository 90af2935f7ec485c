-- Tasks, plans, actions, transcript, snapshots, events and idempotency keys.
-- Times are integer microseconds since the Unix epoch (UTC); JSON columns hold objects.
-- Tables whose rows can be large (JSON, text) keep their rowid: SQLite stores
-- WITHOUT ROWID rows inside the key B-tree, which is slow for rows over ~200 bytes.
-- Every table carries the namespace from the start, so a key scoped to one
-- namespace never sees another's rows.

CREATE TABLE tasks (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    goal TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    paused_from TEXT NOT NULL DEFAULT '',
    workspace TEXT NOT NULL DEFAULT '',
    context TEXT NOT NULL DEFAULT '{}',
    metadata TEXT NOT NULL DEFAULT '{}',
    approval_mode TEXT NOT NULL,
    callback_url TEXT NOT NULL DEFAULT '',
    final_answer TEXT NOT NULL DEFAULT '',
    error_summary TEXT NOT NULL DEFAULT '{}',
    plan_version INTEGER NOT NULL DEFAULT 0,
    revision INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    plan_generated_at INTEGER,
    execution_started_at INTEGER,
    synthesis_started_at INTEGER,
    completed_at INTEGER,
    paused_at INTEGER,
    archived_at INTEGER,
    updated_at INTEGER NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX tasks_by_update ON tasks (namespace, updated_at DESC, id DESC);

CREATE TABLE plans (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, task_id, version)
) WITHOUT ROWID;

-- One row per item per plan version; older versions are kept as they were.
CREATE TABLE plan_items (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    plan_version INTEGER NOT NULL,
    id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    stage TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    summary TEXT NOT NULL DEFAULT '',
    active_issue TEXT NOT NULL DEFAULT '',
    depends_on TEXT NOT NULL DEFAULT '[]',
    tool_name TEXT NOT NULL DEFAULT '',
    input TEXT NOT NULL DEFAULT '{}',
    narrative TEXT NOT NULL DEFAULT '',
    started_at INTEGER,
    completed_at INTEGER,
    duration_us INTEGER,
    UNIQUE (namespace, task_id, plan_version, id)
);

CREATE TABLE actions (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    plan_item_id TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    tool_name TEXT NOT NULL DEFAULT '',
    summary TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL DEFAULT '{}',
    output TEXT NOT NULL DEFAULT '{}',
    error TEXT NOT NULL DEFAULT '',
    duration_us INTEGER,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    log_lines INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    completed_at INTEGER,
    UNIQUE (namespace, id)
);
CREATE INDEX actions_by_task ON actions (namespace, task_id, created_at, id);

CREATE TABLE action_logs (
    namespace TEXT NOT NULL,
    action_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    stream TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, action_id, sequence)
);

-- The transcript. A task's thread id is the task id; standalone threads have task_id ''.
CREATE TABLE messages (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    role TEXT NOT NULL,
    kind TEXT NOT NULL,
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX messages_by_thread ON messages (namespace, thread_id, created_at, id);

CREATE TABLE context_snapshots (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    sequence INTEGER NOT NULL,
    label TEXT NOT NULL,
    content TEXT NOT NULL,
    summarized INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, task_id, sequence)
);

-- The event log: the rowid is the cursor, strictly increasing in commit order.
CREATE TABLE events (
    cursor INTEGER PRIMARY KEY AUTOINCREMENT,
    namespace TEXT NOT NULL,
    type TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    correlation_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX events_by_task ON events (namespace, task_id, cursor);
CREATE INDEX events_by_namespace ON events (namespace, cursor);

-- AIP-155: a retried request returns the first response stored here.
CREATE TABLE request_ids (
    namespace TEXT NOT NULL,
    request_id TEXT NOT NULL,
    method TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, request_id)
);
