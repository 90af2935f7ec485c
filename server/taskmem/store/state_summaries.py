"""Running summaries of threads, and the working-memory snapshot taken at shutdown."""

from __future__ import annotations

import dataclasses
import json

from taskmem.core.working_memory import WorkingMemory
from taskmem.store.writer import Reader, Transaction


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


def save_working_memories(tx: Transaction, entries: list[tuple[str, WorkingMemory]]) -> None:
    """Replace the snapshot with these documents (namespace, memory)."""
    tx.execute("DELETE FROM working_memory_snapshots")
    tx.executemany(
        "INSERT INTO working_memory_snapshots (namespace, agent_id, document, updated_at) VALUES (?, ?, ?, ?)",
        [(namespace, m.agent_id, json.dumps(m.to_document(), ensure_ascii=False), m.updated_at)
         for namespace, m in entries])


def load_working_memories(db: Reader) -> list[tuple[str, WorkingMemory]]:
    rows = db.fetchall("SELECT namespace, document FROM working_memory_snapshots")
    return [(row["namespace"], WorkingMemory.from_document(json.loads(row["document"]))) for row in rows]
