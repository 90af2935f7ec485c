-- Claims of plan items (as SQLite's 0019): one row per claimed item, held by `holder` until expires_at
-- (µs since the epoch) unless renewed. Replicas claiming on one task serialise on the task's row lock
-- (FOR UPDATE), so exactly one of them gets a given item; a renewal and an expiry of the same claim
-- serialise on this row.
CREATE TABLE IF NOT EXISTS plan_item_claims (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    item_id TEXT COLLATE "C" NOT NULL,
    holder TEXT COLLATE "C" NOT NULL,
    claimed_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, task_id, item_id)
);
CREATE INDEX IF NOT EXISTS plan_item_claims_by_expiry ON plan_item_claims (expires_at);
