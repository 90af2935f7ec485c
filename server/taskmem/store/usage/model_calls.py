"""The server's model calls (migration 0023; PostgreSQL 0012): record one, read a namespace's total for its
budget, and sum a task's calls beside the tokens its agents reported on their actions."""

from __future__ import annotations

from collections.abc import Sequence

from taskmem.core.model_usage import Budget, ModelCall, Purpose, Share, TaskUsage, UsageLine
from taskmem.store.access import Reader, Transaction
from taskmem.store.memory.episodes import require_task

_PURPOSES = {purpose.value: purpose for purpose in Purpose}


def record_call(tx: Transaction, call: ModelCall) -> None:
    """The call's row and its namespace's running total, in one transaction; no event (a measurement, not a
    change of anything a view shows)."""
    tx.quiet = True
    tx.execute("INSERT INTO model_calls (namespace, task_id, purpose, model, outcome, tokens_in, tokens_out,"
               " latency_us, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (call.namespace, call.task_id, call.purpose.value if call.purpose else "", call.model,
                call.outcome.value, call.tokens_in, call.tokens_out, call.latency_us, tx.now))
    if call.tokens:
        tx.execute("INSERT INTO model_usage_totals (namespace, tokens) VALUES (?, ?) ON CONFLICT (namespace)"
                   " DO UPDATE SET tokens = model_usage_totals.tokens + excluded.tokens",
                   (call.namespace, call.tokens))


def entry_shares(db: Reader, seqs: Sequence[int]) -> list[Share]:
    """Whose memory entries these are, each weighed by its summary's length: the embedding backlog's batch
    embedded in one call is recorded for each namespace and task by these shares."""
    if not seqs:
        return []
    rows = db.fetchall("SELECT namespace, task_id, length(summary) FROM memory_entries"
                       f" WHERE seq IN ({', '.join('?' * len(seqs))})", list(seqs))
    return [Share(str(row[0]), str(row[1]), int(row[2])) for row in rows]


def namespace_tokens(db: Reader, namespace: str) -> int:
    """Tokens in plus out of every model call of the namespace so far."""
    row = db.fetchone("SELECT tokens FROM model_usage_totals WHERE namespace = ?", (namespace,))
    return int(row[0]) if row else 0


def task_usage(db: Reader, namespace: str, task_id: str, budget_tokens: int | None) -> TaskUsage:
    """GetTaskUsage: the task's calls by model and purpose, its actions' reported tokens, and the namespace's
    budget (None: no budget). NOT_FOUND for an unknown task."""
    require_task(db, namespace, task_id)
    rows = db.fetchall(
        "SELECT model, purpose, count(*), sum(CASE WHEN outcome IN ('timeout', 'error') THEN 1 ELSE 0 END),"
        " sum(CASE WHEN outcome = 'refused' THEN 1 ELSE 0 END), sum(tokens_in), sum(tokens_out), sum(latency_us)"
        " FROM model_calls WHERE namespace = ? AND task_id = ? GROUP BY model, purpose ORDER BY model, purpose",
        (namespace, task_id))
    lines = [UsageLine(str(r[0]), _PURPOSES.get(str(r[1])), *(int(value) for value in r[2:])) for r in rows]
    agents = db.fetchone("SELECT count(*), coalesce(sum(tokens_in), 0), coalesce(sum(tokens_out), 0) FROM actions"
                         " WHERE namespace = ? AND task_id = ?", (namespace, task_id))
    assert agents is not None
    budget = Budget(budget_tokens, namespace_tokens(db, namespace)) if budget_tokens is not None else None
    return TaskUsage(task_id, lines, int(agents[1]), int(agents[2]), int(agents[0]), budget)
