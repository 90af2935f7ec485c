-- Rotating a namespace's webhook secret (as SQLite's 0018): the secret it replaced keeps signing
-- requests beside the new one until previous_until (µs since the epoch). '' and 0 when there is none.
ALTER TABLE webhook_secrets ADD COLUMN IF NOT EXISTS previous_secret TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE webhook_secrets ADD COLUMN IF NOT EXISTS previous_until BIGINT NOT NULL DEFAULT 0;
