"""The PostgreSQL engine: several stateless replicas on one database (pgvector, tsvector, row locks)."""
