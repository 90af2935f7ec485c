-- Plan-progress inference (issue 11): a task may turn it off, and each plan item records who set
-- its status (a caller's UpdatePlanItem, or inference from a message) so a caller's word wins.
ALTER TABLE tasks ADD COLUMN plan_inference_disabled INTEGER NOT NULL DEFAULT 0;
ALTER TABLE plan_items ADD COLUMN status_source TEXT NOT NULL DEFAULT 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED';
ALTER TABLE plan_items ADD COLUMN status_message_id TEXT NOT NULL DEFAULT '';
-- Before this migration only callers changed statuses.
UPDATE plan_items SET status_source = 'PLAN_ITEM_STATUS_SOURCE_EXPLICIT' WHERE status != 'PLAN_ITEM_STATUS_PENDING';
