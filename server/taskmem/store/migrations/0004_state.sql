-- StateService: structured state items (core/state_items.py) with their embeddings, the per-thread
-- extraction watermark, running summaries, and the working-memory snapshot.
-- Times are integer microseconds since the Unix epoch (UTC); JSON columns hold lists/objects.

-- One row per item per thread. uid = type prefix + sha256(type:normalised text)[:12].
CREATE TABLE state_items (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    uid TEXT NOT NULL,
    type_tag TEXT NOT NULL,
    text TEXT NOT NULL,
    status TEXT NOT NULL,
    confidence TEXT NOT NULL DEFAULT 'medium',
    topic_tags TEXT NOT NULL DEFAULT '[]',
    refs TEXT NOT NULL DEFAULT '[]',
    replaced_by TEXT NOT NULL DEFAULT '',
    supersession_evidence TEXT NOT NULL DEFAULT '{}',
    conflict INTEGER NOT NULL DEFAULT 0,
    conflict_with TEXT NOT NULL DEFAULT '[]',
    pinned INTEGER NOT NULL DEFAULT 0,
    source TEXT NOT NULL DEFAULT 'extraction',
    created_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (namespace, thread_id, uid)
);
CREATE INDEX state_items_by_status ON state_items (namespace, thread_id, status);
CREATE INDEX state_items_by_type ON state_items (namespace, thread_id, type_tag);
CREATE INDEX state_items_by_last_seen ON state_items (namespace, thread_id, last_seen_at DESC);

-- The embedding of each item's text (float32, L2-normalised), with the model that made it:
-- items embedded by another model are re-embedded before they are compared.
CREATE TABLE state_item_embeddings (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    uid TEXT NOT NULL,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, thread_id, uid)
);

-- The last message ExtractState has read, per thread; (created_at, id) orders messages.
CREATE TABLE state_watermarks (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    last_message_created_at INTEGER NOT NULL,
    last_message_id TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (namespace, thread_id)
) WITHOUT ROWID;

-- The running summary of a thread (state/follower.py) and the last message it covers.
CREATE TABLE running_summaries (
    namespace TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    summary TEXT NOT NULL,
    message_count INTEGER NOT NULL,
    last_message_created_at INTEGER NOT NULL,
    last_message_id TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (namespace, thread_id)
);

-- Working memory lives in the server's memory; graceful shutdown writes it here and start-up reads it back.
CREATE TABLE working_memory_snapshots (
    namespace TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    document TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (namespace, agent_id)
)
