"""Session items (issue 39): a framework's conversation items kept in a task's transcript.

Each item is a transcript message (so the task's record, views, events and message retention see the
conversation) and a row here with the item's exact JSON. A pop or a clear retracts rows, never messages: what
was said stays in the record, the session stops showing it. An item whose message has expired is gone from
the session too.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.messages import Kind, Message, NewSessionItem, SessionItem
from taskmem.core.retention import Retention, message_capped
from taskmem.store.access import Reader, Transaction
from taskmem.store.tasks import messages as message_store
from taskmem.store.tasks.tasks import load_task


_LIVE = ("s.namespace = ? AND s.task_id = ? AND s.retracted_at IS NULL"
         " AND EXISTS (SELECT 1 FROM messages m WHERE m.namespace = s.namespace AND m.id = s.message_id"
         " AND (m.expires_at IS NULL OR m.expires_at > ?))")


def add_items(tx: Transaction, task_id: str, items: Sequence[NewSessionItem], retention: Retention) -> list[SessionItem]:
    load_task(tx, tx.namespace, task_id)
    row = tx.fetchone("SELECT coalesce(max(seq), 0) FROM session_items WHERE namespace = ? AND task_id = ?",
                      (tx.namespace, task_id))
    seq = int(row[0]) if row else 0
    stored = []
    for position, item in enumerate(items):
        # One microsecond apart: the transcript is ordered by (time, id), and ids of one instant are random.
        at = tx.now + position
        expiry = retention.message_expiry(tx.namespace, Kind.TEXT, None, False, at)
        message = message_store.post_message(tx, Message(tx.namespace, new_id("msg"), task_id, item.role, Kind.TEXT,
                                                         item.content, at, task_id, expiry),
                                             message_capped(Kind.TEXT, False))
        seq += 1
        tx.execute("INSERT INTO session_items (namespace, task_id, seq, message_id, item, created_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", (tx.namespace, task_id, seq, message.id, item.item_json, tx.now))
        stored.append(SessionItem(message.id, item.item_json, tx.now))
    return stored


def list_items(db: Reader, namespace: str, task_id: str, limit: int, now: int) -> list[SessionItem]:
    """The live items oldest first: all (limit 0) or the newest `limit`."""
    load_task(db, namespace, task_id)
    bound = " LIMIT ?" if limit else ""
    rows = db.fetchall(f"SELECT s.message_id, s.item, s.created_at FROM session_items s WHERE {_LIVE}"
                       f" ORDER BY s.seq DESC{bound}", (namespace, task_id, now, *([limit] if limit else [])))
    return [SessionItem(str(r[0]), str(r[1]), int(r[2])) for r in reversed(rows)]


def pop_item(tx: Transaction, task_id: str) -> SessionItem | None:
    newest = list_items(tx, tx.namespace, task_id, 1, tx.now)
    if not newest:
        return None
    _retract(tx, task_id, [newest[0].message_id], "pop")
    return newest[0]


def clear_items(tx: Transaction, task_id: str) -> int:
    live = list_items(tx, tx.namespace, task_id, 0, tx.now)
    if live:
        _retract(tx, task_id, [item.message_id for item in live], "clear")
    return len(live)


def _retract(tx: Transaction, task_id: str, message_ids: list[str], reason: str) -> None:
    tx.execute(f"UPDATE session_items SET retracted_at = ? WHERE namespace = ? AND task_id = ?"
               f" AND message_id IN ({', '.join('?' * len(message_ids))})",
               (tx.now, tx.namespace, task_id, *message_ids))
    tx.emit(EventType.SESSION_ITEMS_RETRACTED, task_id, None, {"message_ids": message_ids, "reason": reason})
