-- "May be finished" questions (issue 38): a message that probably finishes a plan item, but not by certain
-- evidence, leaves the item's status alone and records a question on it (core/plan_inference): the message,
-- the clause that says it and why it was not certain. Cleared when answered (UpdatePlanItem) or when the
-- item's status changes.
ALTER TABLE plan_items ADD COLUMN IF NOT EXISTS question_message_id TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE plan_items ADD COLUMN IF NOT EXISTS question_evidence TEXT NOT NULL DEFAULT '';
ALTER TABLE plan_items ADD COLUMN IF NOT EXISTS question_reason TEXT NOT NULL DEFAULT '';
