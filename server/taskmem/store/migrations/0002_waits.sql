-- Waits (smart waits): one row each, kept after they end. The scheduler loads the
-- WAITING ones at start-up. target holds the kind's fields as a JSON object.
CREATE TABLE waits (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL DEFAULT '',
    criteria TEXT NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL DEFAULT '',
    timeout_us INTEGER,
    poll_interval_us INTEGER,
    start_cursor INTEGER NOT NULL DEFAULT 0,
    correlation_id TEXT NOT NULL,
    forced INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    ended_at INTEGER,
    UNIQUE (namespace, id)
);
CREATE INDEX waits_by_namespace ON waits (namespace, created_at, id);
CREATE INDEX waits_by_task ON waits (namespace, task_id, created_at, id);
CREATE INDEX waits_open ON waits (status) WHERE status = 'WAIT_STATUS_WAITING';

-- Maintenance looks for working tasks idle since a time, and finished tasks finished before one.
CREATE INDEX tasks_by_status ON tasks (status, updated_at);
