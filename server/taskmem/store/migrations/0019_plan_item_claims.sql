-- Claims of plan items (issue 28): an agent that ClaimPlanItem handed an item holds it under a lease
-- until expires_at (µs since the epoch) unless it renews. One row per claimed item, keyed by the item's
-- stable id rather than a plan version, so a claim outlives a ReplacePlan that keeps the item. A claim
-- counts only while its item is IN_PROGRESS; an expired one is removed (and its item returned to
-- PENDING) by the claim sweeper, or by the next claim or update of the task.
CREATE TABLE IF NOT EXISTS plan_item_claims (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    holder TEXT NOT NULL,
    claimed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, task_id, item_id)
) WITHOUT ROWID;
-- The sweeper finds expired claims across namespaces, soonest first.
CREATE INDEX IF NOT EXISTS plan_item_claims_by_expiry ON plan_item_claims (expires_at);
