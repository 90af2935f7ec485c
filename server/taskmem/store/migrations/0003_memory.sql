-- MemoryService: the typed memory archive, project knowledge, episodes, artifacts, learned patterns.
-- Times are integer microseconds since the epoch, as everywhere else.

-- Memory entries are immutable once written. seq is the rowid the full-text and vector
-- indexes point at; id is the stable public id.
CREATE TABLE memory_entries (
    seq INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    subtask_id TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    summary TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    -- who wrote it: api, extraction, or another service (state)
    source TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX memory_entries_by_task ON memory_entries (namespace, task_id, created_at, seq);
CREATE INDEX memory_entries_by_subtask ON memory_entries (namespace, task_id, subtask_id, created_at);
CREATE INDEX memory_entries_by_type ON memory_entries (namespace, task_id, type, created_at);
CREATE INDEX memory_entries_by_time ON memory_entries (namespace, created_at, seq);

-- Tags and relevance_to, one row per value: filters match whole values, never substrings.
CREATE TABLE memory_entry_tags (
    tag TEXT NOT NULL,
    entry_seq INTEGER NOT NULL REFERENCES memory_entries (seq),
    PRIMARY KEY (tag, entry_seq)
) WITHOUT ROWID;
CREATE INDEX memory_entry_tags_by_entry ON memory_entry_tags (entry_seq, tag);

CREATE TABLE memory_entry_relevance (
    subtask_id TEXT NOT NULL,
    entry_seq INTEGER NOT NULL REFERENCES memory_entries (seq),
    PRIMARY KEY (subtask_id, entry_seq)
) WITHOUT ROWID;
CREATE INDEX memory_entry_relevance_by_entry ON memory_entry_relevance (entry_seq, subtask_id);

-- Full text of summary and detail (BM25, snippets), an external-content index over
-- memory_entries written by the store in the same transaction as the entry.
CREATE VIRTUAL TABLE memory_fts USING fts5 (
    summary, detail, content = 'memory_entries', content_rowid = 'seq', tokenize = 'porter unicode61'
);

-- The embedding model whose vectors memory_vectors holds (one row once a model is in use).
-- memory_vectors itself (sqlite-vec vec0: seq, namespace partition key, task_id metadata,
-- float[dimension] cosine) is created by the server for the recorded dimension, which a
-- migration cannot know; `taskmem reembed` drops and rebuilds it for another model.
CREATE TABLE memory_embedding_model (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    model TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL
);

-- Project knowledge: one current value per (namespace, category, key); every value that
-- lost (replaced, or rejected for lower confidence) stays in knowledge_history.
CREATE TABLE knowledge (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    category TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL,
    revision INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, category, key)
);
CREATE INDEX knowledge_by_key ON knowledge (namespace, key);

CREATE TABLE knowledge_history (
    seq INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    knowledge_id TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    confidence REAL NOT NULL,
    -- KNOWLEDGE_VALUE_OUTCOME_REPLACED (was current, lost to a later write) or _REJECTED (never won)
    outcome TEXT NOT NULL,
    written_at INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL
);
CREATE INDEX knowledge_history_by_entry ON knowledge_history (namespace, knowledge_id, seq);

-- Episodes: what was tried and what happened.
CREATE TABLE episodes (
    seq INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    action TEXT NOT NULL,
    approach TEXT NOT NULL,
    outcome TEXT NOT NULL DEFAULT '',
    duration_us INTEGER,
    tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX episodes_by_task ON episodes (namespace, task_id, created_at, seq);
CREATE INDEX episodes_by_agent ON episodes (namespace, agent_id, action, created_at, seq);
CREATE INDEX episodes_by_time ON episodes (namespace, created_at, seq);

-- Artifacts: files and outputs a task produced, with size and sha256 at registration.
CREATE TABLE artifacts (
    seq INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    path TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    size_bytes INTEGER,
    sha256 TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    UNIQUE (namespace, id)
);
CREATE INDEX artifacts_by_task ON artifacts (namespace, task_id, created_at, seq);
CREATE INDEX artifacts_by_path ON artifacts (namespace, path);
CREATE INDEX artifacts_by_time ON artifacts (namespace, created_at, seq);

-- Learned patterns: a repeat of (type, key) counts up frequency and moves last_seen.
CREATE TABLE learned_patterns (
    namespace TEXT NOT NULL,
    id TEXT NOT NULL,
    pattern_type TEXT NOT NULL,
    pattern_key TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    frequency INTEGER NOT NULL DEFAULT 1,
    created_at INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    UNIQUE (namespace, id),
    UNIQUE (namespace, pattern_type, pattern_key)
);
CREATE INDEX learned_patterns_by_frequency ON learned_patterns (namespace, pattern_type, frequency, last_seen);
