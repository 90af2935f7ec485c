-- Issue 40: who changed what. Every event records the API key's id (never its secret) and the agent id the
-- caller gave; ListEvents and SubscribeEvents filter by them. Older events name nobody ('').
ALTER TABLE events ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN agent_id TEXT NOT NULL DEFAULT '';

-- The key each task was created with, for keys scoped to "the tasks it created": kept apart from the event
-- log, whose TTL may delete the TASK_CREATED event long before the task goes.
CREATE TABLE task_creators (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    PRIMARY KEY (namespace, task_id)
);
