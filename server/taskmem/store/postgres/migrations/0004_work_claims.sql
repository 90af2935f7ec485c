-- Claims on shared background work, so replicas on one database never do the same piece twice. A replica
-- claims rows with FOR UPDATE SKIP LOCKED, setting claimed_by and claim_expires_at; one that dies stops
-- renewing, and another takes the rows once claim_expires_at has passed. SQLite has no such columns: its
-- one process does all the work itself.

-- Polled waits (http, file): the claim holder alone looks at the target and renews its claims every
-- third of the lease (store/wait_claims.py).
ALTER TABLE waits ADD COLUMN claimed_by TEXT COLLATE "C";
ALTER TABLE waits ADD COLUMN claim_expires_at BIGINT;
-- Renewal finds a replica's open claims by holder.
CREATE INDEX waits_claimed ON waits (claimed_by) WHERE status = 'WAIT_STATUS_WAITING';

-- The embedding backlog: a replica claims a batch of queued entries, embeds them, and stores the vectors
-- of those it still holds (store/memory_backlog.py).
ALTER TABLE memory_embedding_queue ADD COLUMN claimed_by TEXT COLLATE "C";
ALTER TABLE memory_embedding_queue ADD COLUMN claim_expires_at BIGINT;

-- Cached views across replicas (store/postgres/view_freshness.py): a replica's caches drop what another
-- replica's events name; a commit that changed something with no event (its reach unknown) counts here,
-- and every replica that sees the count move drops its thread reads, as SQLite does for its own.
ALTER TABLE event_cursor ADD COLUMN silent_commits BIGINT NOT NULL DEFAULT 0;
