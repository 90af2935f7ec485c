"""Running summaries of threads."""

from __future__ import annotations

import dataclasses

from taskmem.store.access import Reader, Transaction


@dataclasses.dataclass(frozen=True)
class RunningSummary:
    thread_id: str
    summary: str
    message_count: int  # messages of the thread it covers
    last_message_created_at: int
    last_message_id: str
    updated_at: int


def running_summary(db: Reader, namespace: str, thread_id: str) -> RunningSummary | None:
    row = db.fetchone("SELECT * FROM running_summaries WHERE namespace = ? AND thread_id = ?", (namespace, thread_id))
    if row is None:
        return None
    return RunningSummary(row["thread_id"], row["summary"], row["message_count"], row["last_message_created_at"],
                          row["last_message_id"], row["updated_at"])


def save_running_summary(tx: Transaction, summary: RunningSummary) -> None:
    tx.execute(
        "INSERT INTO running_summaries (namespace, thread_id, summary, message_count, last_message_created_at,"
        " last_message_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, thread_id) DO UPDATE SET"
        " summary = excluded.summary, message_count = excluded.message_count,"
        " last_message_created_at = excluded.last_message_created_at, last_message_id = excluded.last_message_id,"
        " updated_at = excluded.updated_at",
        (tx.namespace, summary.thread_id, summary.summary, summary.message_count, summary.last_message_created_at,
         summary.last_message_id, summary.updated_at))


def message_count(db: Reader, namespace: str, thread_id: str) -> int:
    row = db.fetchone("SELECT count(*) FROM messages WHERE namespace = ? AND thread_id = ?", (namespace, thread_id))
    return int(row[0]) if row else 0
