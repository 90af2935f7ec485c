-- Retention of finished webhook deliveries (issue 17): the maintenance loop deletes delivered and
-- dead-lettered rows some time after their last attempt. This index finds them by state and age
-- without scanning the table; pending rows (being retried) are never deleted and stay out of it.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (state, namespace, last_attempt_at)
    WHERE state != 'WEBHOOK_DELIVERY_STATE_PENDING';
