-- Valid time (issue 29): reads answer "as of" a past moment from what the rows already keep. Every
-- statement can run again over its own work (the runner skips an ADD COLUMN whose column exists).
-- A state item holds from created_at until valid_to, the time it was superseded (NULL while it holds;
-- reactivating it clears it), and prior_status is the status it had while it held, which an "as of"
-- read before valid_to shows. Items superseded before this migration take their last change time and
-- their type's first status.
ALTER TABLE state_items ADD COLUMN valid_to INTEGER;
ALTER TABLE state_items ADD COLUMN prior_status TEXT NOT NULL DEFAULT '';
UPDATE state_items SET valid_to = updated_at, prior_status = CASE type_tag WHEN 'action' THEN 'open'
    WHEN 'question' THEN 'open' ELSE 'active' END WHERE status = 'superseded' AND valid_to IS NULL;

-- Since when a knowledge entry's current value holds (updated_at also moves when only its source or
-- confidence change). Existing entries: the last replacement of their value, else their creation.
ALTER TABLE knowledge ADD COLUMN valid_from INTEGER NOT NULL DEFAULT 0;
UPDATE knowledge SET valid_from = coalesce(
    (SELECT max(h.recorded_at) FROM knowledge_history h WHERE h.namespace = knowledge.namespace
     AND h.knowledge_id = knowledge.id AND h.outcome = 'KNOWLEDGE_VALUE_OUTCOME_REPLACED'), created_at)
    WHERE valid_from = 0;
