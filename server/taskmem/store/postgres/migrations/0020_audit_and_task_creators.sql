-- Issue 40 (as SQLite's 0030): who changed what. Every event records the API key's id (never its secret)
-- and the agent id the caller gave; ListEvents and SubscribeEvents filter by them. Older events name nobody.
ALTER TABLE events ADD COLUMN IF NOT EXISTS key_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN IF NOT EXISTS agent_id TEXT COLLATE "C" NOT NULL DEFAULT '';

-- The key each task was created with, for keys scoped to "the tasks it created": kept apart from the event
-- log, whose TTL may delete the TASK_CREATED event long before the task goes.
CREATE TABLE IF NOT EXISTS task_creators (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    key_id TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (namespace, task_id)
);
