"""The transcript of each thread, and context snapshots."""

from __future__ import annotations

from typing import Any

from taskmem.core.events import EventType
from taskmem.core.messages import ContextSnapshot, Kind, Message, Role
from taskmem.store.tasks.tasks import load_task, touch_task
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction
from taskmem.store.unexpired import unexpired_sql


def message_from_row(row: Row) -> Message:
    return Message(row["namespace"], row["id"], row["thread_id"], Role(row["role"]), Kind(row["kind"]),
                   row["content"], row["created_at"], row["task_id"], row["expires_at"])


def snapshot_from_row(row: Row) -> ContextSnapshot:
    return ContextSnapshot(row["namespace"], row["id"], row["task_id"], row["sequence"], row["label"],
                           row["content"], bool(row["summarized"]), row["created_at"])


def post_message(tx: Transaction, message: Message, capped: bool = False) -> Message:
    if message.task_id:
        touch_task(tx, message.task_id)
    return insert_message(tx, message, capped)


def insert_message(tx: Transaction, message: Message, capped: bool = False) -> Message:
    """Store the message and its event; the caller answers for touching its task. capped: a count cap applies
    to it (core.retention.message_capped; store/retention_caps.py)."""
    tx.defer(
        "messages", "INSERT INTO messages (namespace, id, thread_id, task_id, role, kind, content, created_at,"
        " expires_at, capped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (message.namespace, message.id, message.thread_id, message.task_id, message.role.value,
         message.kind.value, message.content, message.created_at, message.expires_at, int(capped)))
    tx.emit(EventType.MESSAGE_POSTED, message.task_id, message).expires_at = message.expires_at
    return message


def list_messages(db: Reader, namespace: str, task_id: str, thread_id: str, kinds: list[Kind],
                  after_key: list[Any] | None, limit: int) -> list[Message]:
    """Oldest first by (created_at, id); after_key is the previous page's last (created_at, id)."""
    if task_id:
        load_task(db, namespace, task_id)
    unexpired, now = unexpired_sql()
    rows = (PageQuery("messages", order=("created_at", "id"))
            .equals("namespace", namespace).where("thread_id = ?", thread_id).where(unexpired, *now)
            .any_of("kind", (k.value for k in kinds)).after(after_key).fetch(db, limit))
    return [message_from_row(row) for row in rows]


def recent_messages(db: Reader, namespace: str, thread_id: str, count: int, at: int | None = None) -> list[Message]:
    """The newest `count` messages (at: posted by then), oldest first."""
    unexpired, now = unexpired_sql()
    rows = db.fetchall(
        f"SELECT * FROM messages WHERE namespace = ? AND thread_id = ? AND created_at <= ? AND {unexpired}"
        " ORDER BY created_at DESC, id DESC LIMIT ?",
        (namespace, thread_id, 2**63 - 1 if at is None else at, *now, count))
    return [message_from_row(row) for row in reversed(rows)]


def record_snapshot(tx: Transaction, snapshot: ContextSnapshot) -> ContextSnapshot:
    touch_task(tx, snapshot.task_id)
    row = tx.fetchone(
        "SELECT coalesce(max(sequence) + 1, 0) AS next FROM context_snapshots WHERE namespace = ? AND task_id = ?",
        (tx.namespace, snapshot.task_id))
    snapshot.sequence = row["next"] if row else 0
    tx.execute(
        "INSERT INTO context_snapshots (namespace, id, task_id, sequence, label, content, summarized, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (snapshot.namespace, snapshot.id, snapshot.task_id, snapshot.sequence, snapshot.label, snapshot.content,
         int(snapshot.summarized), snapshot.created_at))
    tx.emit(EventType.CONTEXT_SNAPSHOT_RECORDED, snapshot.task_id, snapshot, {"content": ""})
    return snapshot


def list_snapshots(db: Reader, namespace: str, task_id: str, after: int, limit: int) -> list[ContextSnapshot]:
    load_task(db, namespace, task_id)
    rows = db.fetchall(
        "SELECT * FROM context_snapshots WHERE namespace = ? AND task_id = ? AND sequence > ?"
        " ORDER BY sequence LIMIT ?", (namespace, task_id, after, limit))
    return [snapshot_from_row(row) for row in rows]
