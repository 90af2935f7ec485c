-- The PostgreSQL schema: the SQLite migrations 0001-0011 (store/migrations) as one file, column for
-- column, so `taskmem copy` moves rows unchanged. Dialect differences: integers are BIGINT, text
-- compares byte-wise (COLLATE "C", as SQLite's BINARY) so keyset pages order ids the same on both
-- engines, flags stay 0/1 integers, full text is a generated tsvector column with a GIN index
-- (FTS5's memory_fts on SQLite), vectors are pgvector values (sqlite-vec blobs on SQLite), and the
-- event log takes its cursors from event_cursor (see store/postgres/commit.py).

CREATE EXTENSION IF NOT EXISTS vector;

-- ===== from SQLite 0001_tasks.sql =====

-- Tasks, plans, actions, transcript, snapshots, events and idempotency keys.
-- Times are integer microseconds since the Unix epoch (UTC); JSON columns hold objects.
-- Tables whose rows can be large (JSON, text) keep their rowid: SQLite stores
-- WITHOUT ROWID rows inside the key B-tree, which is slow for rows over ~200 bytes.
-- Every table carries the namespace from the start, so a key scoped to one
-- namespace never sees another's rows.

CREATE TABLE tasks (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    goal TEXT COLLATE "C" NOT NULL DEFAULT '',
    status TEXT COLLATE "C" NOT NULL,
    paused_from TEXT COLLATE "C" NOT NULL DEFAULT '',
    workspace TEXT COLLATE "C" NOT NULL DEFAULT '',
    context TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    metadata TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    approval_mode TEXT COLLATE "C" NOT NULL,
    callback_url TEXT COLLATE "C" NOT NULL DEFAULT '',
    final_answer TEXT COLLATE "C" NOT NULL DEFAULT '',
    error_summary TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    plan_version BIGINT NOT NULL DEFAULT 0,
    revision BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    plan_generated_at BIGINT,
    execution_started_at BIGINT,
    synthesis_started_at BIGINT,
    completed_at BIGINT,
    paused_at BIGINT,
    archived_at BIGINT,
    updated_at BIGINT NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX tasks_by_update ON tasks (namespace, updated_at DESC, id DESC);

CREATE TABLE plans (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    version BIGINT NOT NULL,
    reason TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, task_id, version)
);

-- One row per item per plan version; older versions are kept as they were.
CREATE TABLE plan_items (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    plan_version BIGINT NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    ordinal BIGINT NOT NULL,
    stage TEXT COLLATE "C" NOT NULL DEFAULT '',
    title TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    summary TEXT COLLATE "C" NOT NULL DEFAULT '',
    active_issue TEXT COLLATE "C" NOT NULL DEFAULT '',
    depends_on TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    tool_name TEXT COLLATE "C" NOT NULL DEFAULT '',
    input TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    narrative TEXT COLLATE "C" NOT NULL DEFAULT '',
    started_at BIGINT,
    completed_at BIGINT,
    duration_us BIGINT,
    UNIQUE (namespace, task_id, plan_version, id)
);

CREATE TABLE actions (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    plan_item_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    type TEXT COLLATE "C" NOT NULL,
    tool_name TEXT COLLATE "C" NOT NULL DEFAULT '',
    summary TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    input TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    output TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    error TEXT COLLATE "C" NOT NULL DEFAULT '',
    duration_us BIGINT,
    tokens_in BIGINT NOT NULL DEFAULT 0,
    tokens_out BIGINT NOT NULL DEFAULT 0,
    log_lines BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    completed_at BIGINT,
    UNIQUE (namespace, id)
);
CREATE INDEX actions_by_task ON actions (namespace, task_id, created_at, id);

CREATE TABLE action_logs (
    namespace TEXT COLLATE "C" NOT NULL,
    action_id TEXT COLLATE "C" NOT NULL,
    sequence BIGINT NOT NULL,
    stream TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, action_id, sequence)
);

-- The transcript. A task's thread id is the task id; standalone threads have task_id ''.
CREATE TABLE messages (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    role TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX messages_by_thread ON messages (namespace, thread_id, created_at, id);

CREATE TABLE context_snapshots (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    sequence BIGINT NOT NULL,
    label TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    summarized BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, task_id, sequence)
);

-- The event log: the rowid is the cursor, strictly increasing in commit order.
CREATE TABLE events (
    cursor BIGINT PRIMARY KEY,
    namespace TEXT COLLATE "C" NOT NULL,
    type TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    correlation_id TEXT COLLATE "C" NOT NULL,
    payload TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX events_by_task ON events (namespace, task_id, cursor);
CREATE INDEX events_by_namespace ON events (namespace, cursor);

-- AIP-155: a retried request returns the first response stored here.
CREATE TABLE request_ids (
    namespace TEXT COLLATE "C" NOT NULL,
    request_id TEXT COLLATE "C" NOT NULL,
    method TEXT COLLATE "C" NOT NULL,
    request_hash TEXT COLLATE "C" NOT NULL,
    response BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, request_id)
);

-- ===== from SQLite 0002_waits.sql =====

-- Waits (smart waits): one row each, kept after they end. The scheduler loads the
-- WAITING ones at start-up. target holds the kind's fields as a JSON object.
CREATE TABLE waits (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    criteria TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,
    target TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    result TEXT COLLATE "C" NOT NULL DEFAULT '',
    timeout_us BIGINT,
    poll_interval_us BIGINT,
    start_cursor BIGINT NOT NULL DEFAULT 0,
    correlation_id TEXT COLLATE "C" NOT NULL,
    forced BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    ended_at BIGINT,
    UNIQUE (namespace, id)
);
CREATE INDEX waits_by_namespace ON waits (namespace, created_at, id);
CREATE INDEX waits_by_task ON waits (namespace, task_id, created_at, id);
CREATE INDEX waits_open ON waits (status) WHERE status = 'WAIT_STATUS_WAITING';

-- Maintenance looks for working tasks idle since a time, and finished tasks finished before one.
CREATE INDEX tasks_by_status ON tasks (status, updated_at);

-- ===== from SQLite 0003_memory.sql =====

-- MemoryService: the typed memory archive, project knowledge, episodes, artifacts, learned patterns.
-- Times are integer microseconds since the epoch, as everywhere else.

-- Memory entries are immutable once written. seq is the rowid the full-text and vector
-- indexes point at; id is the stable public id.
CREATE TABLE memory_entries (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    subtask_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    type TEXT COLLATE "C" NOT NULL,
    summary TEXT COLLATE "C" NOT NULL,
    detail TEXT COLLATE "C" NOT NULL DEFAULT '',
    -- who wrote it: api, extraction, or another service (state)
    source TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX memory_entries_by_task ON memory_entries (namespace, task_id, created_at, seq);
CREATE INDEX memory_entries_by_subtask ON memory_entries (namespace, task_id, subtask_id, created_at);
CREATE INDEX memory_entries_by_type ON memory_entries (namespace, task_id, type, created_at);
CREATE INDEX memory_entries_by_time ON memory_entries (namespace, created_at, seq);

-- Tags and relevance_to, one row per value: filters match whole values, never substrings.
CREATE TABLE memory_entry_tags (
    tag TEXT COLLATE "C" NOT NULL,
    entry_seq BIGINT NOT NULL REFERENCES memory_entries (seq),
    PRIMARY KEY (tag, entry_seq)
);
CREATE INDEX memory_entry_tags_by_entry ON memory_entry_tags (entry_seq, tag);

CREATE TABLE memory_entry_relevance (
    subtask_id TEXT COLLATE "C" NOT NULL,
    entry_seq BIGINT NOT NULL REFERENCES memory_entries (seq),
    PRIMARY KEY (subtask_id, entry_seq)
);
CREATE INDEX memory_entry_relevance_by_entry ON memory_entry_relevance (entry_seq, subtask_id);

-- Full text of summary and detail (BM25, snippets), an external-content index over
-- memory_entries written by the store in the same transaction as the entry.
-- (full text: a generated tsvector column on memory_entries, below)

-- The embedding model whose vectors memory_vectors holds (one row once a model is in use).
-- memory_vectors itself (sqlite-vec vec0: seq, namespace partition key, task_id metadata,
-- float[dimension] cosine) is created by the server for the recorded dimension, which a
-- migration cannot know; `taskmem reembed` drops and rebuilds it for another model.
CREATE TABLE memory_embedding_model (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    model TEXT COLLATE "C" NOT NULL,
    dimension BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL
);

-- Project knowledge: one current value per (namespace, category, key); every value that
-- lost (replaced, or rejected for lower confidence) stays in knowledge_history.
CREATE TABLE knowledge (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    category TEXT COLLATE "C" NOT NULL,
    key TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    source TEXT COLLATE "C" NOT NULL DEFAULT '',
    confidence DOUBLE PRECISION NOT NULL,
    revision BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, category, key)
);
CREATE INDEX knowledge_by_key ON knowledge (namespace, key);

CREATE TABLE knowledge_history (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT COLLATE "C" NOT NULL,
    knowledge_id TEXT COLLATE "C" NOT NULL,
    value TEXT COLLATE "C" NOT NULL,
    source TEXT COLLATE "C" NOT NULL DEFAULT '',
    confidence DOUBLE PRECISION NOT NULL,
    -- KNOWLEDGE_VALUE_OUTCOME_REPLACED (was current, lost to a later write) or _REJECTED (never won)
    outcome TEXT COLLATE "C" NOT NULL,
    written_at BIGINT NOT NULL,
    recorded_at BIGINT NOT NULL
);
CREATE INDEX knowledge_history_by_entry ON knowledge_history (namespace, knowledge_id, seq);

-- Episodes: what was tried and what happened.
CREATE TABLE episodes (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    agent_id TEXT COLLATE "C" NOT NULL,
    action TEXT COLLATE "C" NOT NULL,
    approach TEXT COLLATE "C" NOT NULL,
    outcome TEXT COLLATE "C" NOT NULL DEFAULT '',
    duration_us BIGINT,
    tokens_in BIGINT NOT NULL DEFAULT 0,
    tokens_out BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX episodes_by_task ON episodes (namespace, task_id, created_at, seq);
CREATE INDEX episodes_by_agent ON episodes (namespace, agent_id, action, created_at, seq);
CREATE INDEX episodes_by_time ON episodes (namespace, created_at, seq);

-- Artifacts: files and outputs a task produced, with size and sha256 at registration.
CREATE TABLE artifacts (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    agent_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    type TEXT COLLATE "C" NOT NULL,
    path TEXT COLLATE "C" NOT NULL,
    description TEXT COLLATE "C" NOT NULL DEFAULT '',
    size_bytes BIGINT,
    sha256 TEXT COLLATE "C" NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX artifacts_by_task ON artifacts (namespace, task_id, created_at, seq);
CREATE INDEX artifacts_by_path ON artifacts (namespace, path);
CREATE INDEX artifacts_by_time ON artifacts (namespace, created_at, seq);

-- Learned patterns: a repeat of (type, key) counts up frequency and moves last_seen.
CREATE TABLE learned_patterns (
    namespace TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    pattern_type TEXT COLLATE "C" NOT NULL,
    pattern_key TEXT COLLATE "C" NOT NULL,
    data TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    frequency BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, pattern_type, pattern_key)
);
CREATE INDEX learned_patterns_by_frequency ON learned_patterns (namespace, pattern_type, frequency, last_seen);

-- ===== from SQLite 0004_state.sql =====

-- StateService: structured state items (seed 004) with their embeddings, the per-thread
-- extraction watermark, running summaries, and the working-memory snapshot.
-- Times are integer microseconds since the Unix epoch (UTC); JSON columns hold lists/objects.

-- One row per item per thread. uid = type prefix + sha256(type:normalised text)[:12].
CREATE TABLE state_items (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    uid TEXT COLLATE "C" NOT NULL,
    type_tag TEXT COLLATE "C" NOT NULL,
    text TEXT COLLATE "C" NOT NULL,
    status TEXT COLLATE "C" NOT NULL,
    confidence TEXT COLLATE "C" NOT NULL DEFAULT 'medium',
    topic_tags TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    refs TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    replaced_by TEXT COLLATE "C" NOT NULL DEFAULT '',
    supersession_evidence TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    conflict BIGINT NOT NULL DEFAULT 0,
    conflict_with TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    pinned BIGINT NOT NULL DEFAULT 0,
    source TEXT COLLATE "C" NOT NULL DEFAULT 'extraction',
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (namespace, thread_id, uid)
);
CREATE INDEX state_items_by_status ON state_items (namespace, thread_id, status);
CREATE INDEX state_items_by_type ON state_items (namespace, thread_id, type_tag);
CREATE INDEX state_items_by_last_seen ON state_items (namespace, thread_id, last_seen_at DESC);

-- The embedding of each item's text (float32, L2-normalised), with the model that made it:
-- items embedded by another model are re-embedded before they are compared.
CREATE TABLE state_item_embeddings (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    uid TEXT COLLATE "C" NOT NULL,
    model TEXT COLLATE "C" NOT NULL,
    vector BYTEA NOT NULL,
    created_at BIGINT NOT NULL,
    UNIQUE (namespace, thread_id, uid)
);

-- The last message ExtractState has read, per thread; (created_at, id) orders messages.
CREATE TABLE state_watermarks (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    last_message_created_at BIGINT NOT NULL,
    last_message_id TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, thread_id)
);

-- The running summary of a thread (seed 001) and the last message it covers.
CREATE TABLE running_summaries (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    summary TEXT COLLATE "C" NOT NULL,
    message_count BIGINT NOT NULL,
    last_message_created_at BIGINT NOT NULL,
    last_message_id TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (namespace, thread_id)
);

-- Working memory lives in the server's memory; graceful shutdown writes it here and start-up reads it back.
CREATE TABLE working_memory_snapshots (
    namespace TEXT COLLATE "C" NOT NULL,
    agent_id TEXT COLLATE "C" NOT NULL,
    document TEXT COLLATE "C" NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (namespace, agent_id)
);

-- ===== from SQLite 0005_episode_retention.sql =====

-- Episode retention archives rather than deletes: an archived episode keeps its row.
ALTER TABLE episodes ADD COLUMN archived_at BIGINT;
CREATE INDEX episodes_by_archival ON episodes (namespace, archived_at, created_at, seq);

-- ===== from SQLite 0006_memory_embeddings.sql =====

-- The exact (float32) embedding of each memory entry's summary, made by the model recorded in
-- memory_embedding_model. memory_vectors (vec0, created by the server for the recorded
-- dimension) indexes these vectors quantised to one bit per dimension for the KNN search;
-- the candidates it finds are rescored by cosine against the vectors kept here, and the
-- index is rebuilt from them when its layout changes.
CREATE TABLE memory_embeddings (
    seq BIGINT PRIMARY KEY REFERENCES memory_entries (seq),
    embedding vector NOT NULL
);

-- ===== from SQLite 0007_state_item_entries.sql =====

-- Issue 11: one truth for "where was I?". AddDecision and AddError write a memory entry (the complete
-- history) and reconcile a state item (the current truth); this table links the two, so the views
-- show a state item with the subtask and memory entry that stated it, and BuildContext's memories
-- section can leave out what the state section already says.
CREATE TABLE state_item_entries (
    namespace TEXT COLLATE "C" NOT NULL,
    thread_id TEXT COLLATE "C" NOT NULL,
    uid TEXT COLLATE "C" NOT NULL,             -- the state item the entry was reconciled into (merged or new)
    memory_entry_id TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL,            -- 'decision' or 'error'
    subtask_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    detail TEXT COLLATE "C" NOT NULL DEFAULT '', -- an error's resolution, a decision's detail
    created_at BIGINT NOT NULL,
    PRIMARY KEY (namespace, memory_entry_id)
);
CREATE INDEX state_item_entries_by_item ON state_item_entries (namespace, thread_id, uid, created_at);

-- ===== from SQLite 0008_working_memory.sql =====

-- Working memory is durable (issue 12): every acknowledged PutWorkingMemory is a committed row, read back on
-- each GetWorkingMemory, instead of a server-memory map snapshotted at graceful shutdown (lost on a crash).
-- The snapshot table already holds one JSON document per (namespace, agent_id): it becomes the store.
ALTER TABLE working_memory_snapshots RENAME TO working_memories;

-- ===== from SQLite 0009_memory_embedding_queue.sql =====

-- Memory entries acknowledged but not embedded yet. AddMemoryEntries (and every other writer of
-- memory entries) commits an entry and its row here in one transaction and answers at once; the
-- server's background pass (taskmem/memory/embedding_backlog.py) embeds the queued summaries in seq
-- order and, in one transaction, writes their vectors and deletes their rows. So a crash loses no
-- entry and a restart resumes the backlog where it stopped; `taskmem reembed` empties it.
CREATE TABLE memory_embedding_queue (
    seq BIGINT PRIMARY KEY REFERENCES memory_entries (seq)
);

-- Entries written without a vector before this table existed (embedding_backend none) join it.
INSERT INTO memory_embedding_queue (seq)
    SELECT seq FROM memory_entries WHERE seq NOT IN (SELECT seq FROM memory_embeddings);

-- ===== from SQLite 0010_webhooks.sql =====

-- Webhooks to a task's callback_url (issue 17). Deliveries are derived from the event
-- log: each hooked task has a delivery cursor (the last event delivered or dead-lettered),
-- so nothing is added to the write path of the events themselves.

-- The event types a task's webhook carries, a JSON list of EventType names ('[]': the default set).
ALTER TABLE tasks ADD COLUMN webhook_event_types TEXT COLLATE "C" NOT NULL DEFAULT '[]';

-- One HMAC key per namespace, made on first need.
CREATE TABLE webhook_secrets (
    namespace TEXT COLLATE "C" PRIMARY KEY,
    secret TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

-- Per task: every event up to delivered_cursor was delivered or dead-lettered.
CREATE TABLE webhook_cursors (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    delivered_cursor BIGINT NOT NULL,
    PRIMARY KEY (namespace, task_id)
);

-- One row per event sent (or being sent): its attempts and where it stands.
CREATE TABLE webhook_deliveries (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    cursor BIGINT NOT NULL,
    event_type TEXT COLLATE "C" NOT NULL,
    url TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL,
    attempts BIGINT NOT NULL,
    last_status_code BIGINT NOT NULL DEFAULT 0,
    last_error TEXT COLLATE "C" NOT NULL DEFAULT '',
    first_attempt_at BIGINT NOT NULL,
    last_attempt_at BIGINT NOT NULL,
    next_attempt_at BIGINT,
    UNIQUE (namespace, task_id, cursor)
);
CREATE INDEX webhook_deliveries_by_cursor ON webhook_deliveries (namespace, cursor, task_id);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (state) WHERE state = 'WEBHOOK_DELIVERY_STATE_PENDING';

-- ===== from SQLite 0011_plan_inference.sql =====

-- Plan-progress inference (issue 11): a task may turn it off, and each plan item records who set
-- its status (a caller's UpdatePlanItem, or inference from a message) so a caller's word wins.
ALTER TABLE tasks ADD COLUMN plan_inference_disabled BIGINT NOT NULL DEFAULT 0;
ALTER TABLE plan_items ADD COLUMN status_source TEXT COLLATE "C" NOT NULL DEFAULT 'PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED';
ALTER TABLE plan_items ADD COLUMN status_message_id TEXT COLLATE "C" NOT NULL DEFAULT '';
-- Before this migration only callers changed statuses.
UPDATE plan_items SET status_source = 'PLAN_ITEM_STATUS_SOURCE_EXPLICIT' WHERE status != 'PLAN_ITEM_STATUS_PENDING';


-- ===== PostgreSQL only =====

-- The event log's last cursor. A committing transaction takes its events' cursors by updating this
-- one row as its last statement; the row lock is held until its COMMIT, so the next transaction gets
-- the following cursors only after this one is visible: cursors become visible in commit order.
CREATE TABLE event_cursor (
    id BIGINT PRIMARY KEY CHECK (id = 1),
    last BIGINT NOT NULL
);
INSERT INTO event_cursor (id, last) VALUES (1, 0);

-- Full text of summary (weight A) and detail (weight B), the memory_fts of SQLite.
ALTER TABLE memory_entries ADD COLUMN search tsvector GENERATED ALWAYS AS
    (setweight(to_tsvector('english', summary), 'A') || setweight(to_tsvector('english', detail), 'B')) STORED;
CREATE INDEX memory_entries_search ON memory_entries USING gin (search);

-- SQLite's instr(), which the store's portable SQL uses (knowledge text search).
CREATE FUNCTION instr(haystack TEXT, needle TEXT) RETURNS INTEGER
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS 'SELECT strpos(haystack, needle)';
