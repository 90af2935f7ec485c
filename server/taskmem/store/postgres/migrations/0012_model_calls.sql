-- Cost accounting (as SQLite's 0023): one row per model call the server made, and tokens in plus out
-- per namespace for the budget check.
CREATE TABLE IF NOT EXISTS model_calls (
    namespace TEXT COLLATE "C" NOT NULL,
    task_id TEXT COLLATE "C" NOT NULL,
    purpose TEXT COLLATE "C" NOT NULL,
    model TEXT COLLATE "C" NOT NULL,
    outcome TEXT COLLATE "C" NOT NULL,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    latency_us BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX IF NOT EXISTS model_calls_by_task ON model_calls (namespace, task_id);
CREATE TABLE IF NOT EXISTS model_usage_totals (
    namespace TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    tokens BIGINT NOT NULL
);
