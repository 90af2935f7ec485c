-- Webhooks to a task's callback_url (issue 17). Deliveries are derived from the event
-- log: each hooked task has a delivery cursor (the last event delivered or dead-lettered),
-- so nothing is added to the write path of the events themselves.

-- The event types a task's webhook carries, a JSON list of EventType names ('[]': the default set).
ALTER TABLE tasks ADD COLUMN webhook_event_types TEXT NOT NULL DEFAULT '[]';

-- One HMAC key per namespace, made on first need.
CREATE TABLE webhook_secrets (
    namespace TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Per task: every event up to delivered_cursor was delivered or dead-lettered.
CREATE TABLE webhook_cursors (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    delivered_cursor INTEGER NOT NULL,
    PRIMARY KEY (namespace, task_id)
) WITHOUT ROWID;

-- One row per event sent (or being sent): its attempts and where it stands.
CREATE TABLE webhook_deliveries (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    cursor INTEGER NOT NULL,
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts INTEGER NOT NULL,
    last_status_code INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    first_attempt_at INTEGER NOT NULL,
    last_attempt_at INTEGER NOT NULL,
    next_attempt_at INTEGER,
    UNIQUE (namespace, task_id, cursor)
);
CREATE INDEX webhook_deliveries_by_cursor ON webhook_deliveries (namespace, cursor, task_id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (state) WHERE state = 'WEBHOOK_DELIVERY_STATE_PENDING';
