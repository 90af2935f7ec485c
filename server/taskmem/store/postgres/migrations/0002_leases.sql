-- Leases on background services that must run on one replica at a time (webhook delivery, maintenance):
-- a replica holds a service while it renews the row before expires_at; when it dies, another takes over
-- once the lease expires (store/postgres/leases.py).
CREATE TABLE leases (
    name TEXT COLLATE "C" PRIMARY KEY,
    holder TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL
);
