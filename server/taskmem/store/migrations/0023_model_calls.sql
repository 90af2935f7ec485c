-- Cost accounting (issue 29): one row per model call the server made (chat or embedding endpoint), with
-- the tokens of the endpoint's `usage`, its latency (µs) and outcome, for the task ('' for none) and
-- namespace it worked for; GetTaskUsage sums a task's rows. purpose '' is a call no caller named.
CREATE TABLE IF NOT EXISTS model_calls (
    namespace TEXT NOT NULL,
    task_id TEXT NOT NULL,
    purpose TEXT NOT NULL,
    model TEXT NOT NULL,
    outcome TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    latency_us INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS model_calls_by_task ON model_calls (namespace, task_id);
-- Tokens in plus out per namespace, kept with each call's row, so the budget check before every model
-- call reads one row however many calls there were.
CREATE TABLE IF NOT EXISTS model_usage_totals (
    namespace TEXT NOT NULL PRIMARY KEY,
    tokens INTEGER NOT NULL
) WITHOUT ROWID;
