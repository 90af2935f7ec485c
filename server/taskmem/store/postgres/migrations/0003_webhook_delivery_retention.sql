-- Retention of finished webhook deliveries (as SQLite's 0015): the maintenance loop deletes delivered
-- and dead-lettered rows some time after their last attempt; this index finds them by state and age.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (state, namespace, last_attempt_at)
    WHERE state != 'WEBHOOK_DELIVERY_STATE_PENDING';
