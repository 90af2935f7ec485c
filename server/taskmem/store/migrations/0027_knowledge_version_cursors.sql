-- A knowledge value's version names the event that wrote it (issue 29, point 3): found by its namespace and
-- time (a value's written_at is its KNOWLEDGE_UPSERTED event's created_at), then by the id in its payload.
CREATE INDEX IF NOT EXISTS events_of_knowledge ON events (namespace, created_at)
    WHERE type = 'EVENT_TYPE_KNOWLEDGE_UPSERTED';
