-- Rotating a namespace's webhook secret (issue 27): the secret it replaced keeps signing requests
-- beside the new one until previous_until (µs since the epoch). '' and 0 when there is none.
ALTER TABLE webhook_secrets ADD COLUMN previous_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_secrets ADD COLUMN previous_until INTEGER NOT NULL DEFAULT 0;
