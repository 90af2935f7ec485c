-- Claims on polled waits (http, file), so each look at a target is made by one replica: the replica that
-- holds a wait's claim probes it and renews the claim every third of the lease; a replica that dies stops
-- renewing, and another claims the wait once claim_expires_at has passed (store/wait_claims.py). SQLite
-- has no such columns: its one process is the only one to look.
ALTER TABLE waits ADD COLUMN claimed_by TEXT COLLATE "C";
ALTER TABLE waits ADD COLUMN claim_expires_at BIGINT;
-- Renewal finds a replica's open claims by holder.
CREATE INDEX waits_claimed ON waits (claimed_by) WHERE status = 'WAIT_STATUS_WAITING';
