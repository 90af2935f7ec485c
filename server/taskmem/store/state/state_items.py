"""Structured state items of a thread, their embeddings, and the extraction watermark."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from taskmem.core.errors import NotFound
from taskmem.core.messages import Message
from taskmem.core.open_conflicts import Answer, released, settle
from taskmem.core.state_items import DEFAULT_STATUS, SUPERSEDED, Confidence, StateItem, StateItemType
from taskmem.core.state_records import StoredStateItem, Watermark
from taskmem.core.valid_time import item_as_of
from taskmem.store.tasks.messages import message_from_row
from taskmem.store.unexpired import unexpired_sql
from taskmem.store.tasks.tasks import load_task
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction

_COLUMNS = (
    "namespace", "thread_id", "uid", "type_tag", "text", "status", "confidence", "topic_tags", "refs",
    "replaced_by", "supersession_evidence", "conflict", "conflict_with", "pinned", "source", "created_at",
    "last_seen_at", "updated_at",
)
# Valid time follows the status: superseding an item stamps valid_to once (a later save keeps the first
# stamp) and keeps the status it held; any other status clears both (a reactivated item holds again).
_UPSERT = (f"INSERT INTO state_items ({', '.join(_COLUMNS)}, valid_to, prior_status)"
           f" VALUES ({', '.join('?' * (len(_COLUMNS) + 2))})"
           " ON CONFLICT (namespace, thread_id, uid) DO UPDATE SET "
           + ", ".join(f"{c} = excluded.{c}" for c in _COLUMNS[3:] if c != "created_at")
           + f", valid_to = CASE WHEN excluded.status = '{SUPERSEDED}'"
             " THEN coalesce(state_items.valid_to, excluded.valid_to) ELSE NULL END"
           + f", prior_status = CASE WHEN excluded.status != '{SUPERSEDED}' THEN ''"
             f" WHEN state_items.status != '{SUPERSEDED}' THEN state_items.status ELSE state_items.prior_status END")


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def item_from_row(row: Row) -> StoredStateItem:
    evidence = json.loads(row["supersession_evidence"])
    return StoredStateItem(
        uid=row["uid"], type_tag=StateItemType(row["type_tag"]), text=row["text"], status=row["status"],
        confidence=Confidence(row["confidence"]), topic_tags=json.loads(row["topic_tags"]),
        refs=json.loads(row["refs"]), replaced_by=row["replaced_by"] or None,
        supersession_evidence=evidence or None, conflict=bool(row["conflict"]), pinned=bool(row["pinned"]),
        source=row["source"], created_at=row["created_at"], last_seen_at=row["last_seen_at"],
        thread_id=row["thread_id"], updated_at=row["updated_at"], conflict_with=json.loads(row["conflict_with"]),
        valid_to=row["valid_to"], prior_status=row["prior_status"],
    )


def stored(item: StateItem, thread_id: str, now: int) -> StoredStateItem:
    """Any core item as the stored kind, stamped with its thread and change time."""
    fields = {f.name: getattr(item, f.name) for f in dataclasses.fields(StateItem)}
    return StoredStateItem(**fields, thread_id=thread_id, updated_at=now,
                           conflict_with=list(getattr(item, "conflict_with", [])))


def save_item(tx: Transaction, item: StoredStateItem) -> None:
    """Insert or update the item; its valid_to follows its status here as in the row (_UPSERT)."""
    retired = item.status == SUPERSEDED
    item.valid_to = (item.valid_to or item.updated_at) if retired else None
    if not retired:
        item.prior_status = ""
    tx.execute(_UPSERT, (
        tx.namespace, item.thread_id, item.uid, item.type_tag.value, item.text, item.status,
        Confidence(item.confidence).value, _dumps(item.topic_tags), _dumps(item.refs), item.replaced_by or "",
        _dumps(item.supersession_evidence or {}), int(item.conflict), _dumps(item.conflict_with),
        int(item.pinned), item.source, item.created_at, item.last_seen_at, item.updated_at,
        item.valid_to, DEFAULT_STATUS[item.type_tag] if retired else ""))


def thread_items(db: Reader, namespace: str, thread_id: str, *, include_superseded: bool = True,
                 types: Sequence[str] = (), at: int | None = None) -> list[StoredStateItem]:
    """The thread's items; at: as they stood then (valid time), created by then, each with the status it held."""
    sql = "SELECT * FROM state_items WHERE namespace = ? AND thread_id = ?"
    params: list[Any] = [namespace, thread_id]
    if at is not None:
        sql += " AND created_at <= ?"
        params.append(at)
    if not include_superseded:
        if at is None:
            sql += " AND status != 'superseded'"
        else:
            sql += " AND (valid_to IS NULL OR valid_to > ?)"
            params.append(at)
    if types:
        sql += f" AND type_tag IN ({','.join('?' * len(types))})"
        params.extend(types)
    items = [item_from_row(row) for row in db.fetchall(sql, params)]
    return items if at is None else [i for i in (item_as_of(item, at) for item in items) if i is not None]


def load_item(db: Reader, namespace: str, thread_id: str, uid: str) -> StoredStateItem:
    row = db.fetchone("SELECT * FROM state_items WHERE namespace = ? AND thread_id = ? AND uid = ?",
                      (namespace, thread_id, uid))
    if row is None:
        raise NotFound("state item", uid)
    return item_from_row(row)


# --- embeddings -------------------------------------------------------------------------------

def embeddings(db: Reader, namespace: str, thread_id: str, model: str) -> dict[str, np.ndarray]:
    """uid → vector of the thread's items embedded by model (others must be embedded again)."""
    rows = db.fetchall("SELECT uid, vector FROM state_item_embeddings WHERE namespace = ? AND thread_id = ?"
                       " AND model = ?", (namespace, thread_id, model))
    return {row["uid"]: np.frombuffer(row["vector"], dtype=np.float32) for row in rows}


def save_embedding(tx: Transaction, thread_id: str, uid: str, model: str, vector: np.ndarray) -> None:
    tx.execute(
        "INSERT INTO state_item_embeddings (namespace, thread_id, uid, model, vector, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (namespace, thread_id, uid) DO UPDATE SET"
        " model = excluded.model, vector = excluded.vector, created_at = excluded.created_at",
        (tx.namespace, thread_id, uid, model, np.asarray(vector, dtype=np.float32).tobytes(), tx.now))


# --- watermark and the messages it gates ------------------------------------------------------

def watermark(db: Reader, namespace: str, thread_id: str) -> Watermark | None:
    row = db.fetchone("SELECT last_message_created_at, last_message_id FROM state_watermarks"
                      " WHERE namespace = ? AND thread_id = ?", (namespace, thread_id))
    return Watermark(row[0], row[1]) if row else None


def set_watermark(tx: Transaction, thread_id: str, mark: Watermark) -> None:
    tx.execute(
        "INSERT INTO state_watermarks (namespace, thread_id, last_message_created_at, last_message_id, updated_at)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (namespace, thread_id) DO UPDATE SET"
        " last_message_created_at = excluded.last_message_created_at,"
        " last_message_id = excluded.last_message_id, updated_at = excluded.updated_at",
        (tx.namespace, thread_id, mark.created_at, mark.message_id, tx.now))


def messages_after(db: Reader, namespace: str, thread_id: str, mark: Watermark | None,
                   limit: int) -> list[Message]:
    """The thread's messages after the watermark, oldest first; ties on created_at broken by id."""
    unexpired, now = unexpired_sql()
    rows = (PageQuery("messages", order=("created_at", "id"))
            .where("namespace = ? AND thread_id = ?", namespace, thread_id).where(unexpired, *now)
            .after(None if mark is None else (mark.created_at, mark.message_id)).fetch(db, limit))
    return [message_from_row(row) for row in rows]


def messages_by_id(db: Reader, namespace: str, thread_id: str, ids: Iterable[str]) -> list[Message]:
    """The thread's messages with these ids, oldest first (ids of other threads are not returned)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return []
    unexpired, now = unexpired_sql()
    rows = db.fetchall(
        f"SELECT * FROM messages WHERE namespace = ? AND thread_id = ? AND id IN ({','.join('?' * len(wanted))})"
        f" AND {unexpired} ORDER BY created_at, id", (namespace, thread_id, *wanted, *now))
    return [message_from_row(row) for row in rows]


def check_thread(db: Reader, namespace: str, task_id: str) -> None:
    """A task's thread needs the task (NOT_FOUND otherwise); a standalone thread always exists."""
    if task_id:
        load_task(db, namespace, task_id)


def items_and_messages(db: Reader, namespace: str, thread_id: str, task_id: str,
                       uid: str) -> tuple[StoredStateItem, list[Message]]:
    """ExpandStateItem's read: the item and the messages of its refs."""
    check_thread(db, namespace, task_id)
    item = load_item(db, namespace, thread_id, uid)
    return item, messages_by_id(db, namespace, thread_id, item.refs)


def current_items(db: Reader, namespace: str, thread_id: str, task_id: str) -> list[StoredStateItem]:
    check_thread(db, namespace, task_id)
    return thread_items(db, namespace, thread_id, include_superseded=False)


def change_item(tx: Transaction, thread_id: str, task_id: str, uid: str, *, pinned: bool | None = None,
                status: str | None = None) -> StoredStateItem:
    """Pin/unpin an item or set its status (already checked against its type). Retiring an item settles
    its open conflicts (release_rivals)."""
    check_thread(tx, tx.namespace, task_id)
    item = load_item(tx, tx.namespace, thread_id, uid)
    if pinned is not None:
        item.pinned = pinned
    retiring = status == SUPERSEDED and item.active
    if status is not None:
        item.status = status
    item.updated_at = tx.now
    save_item(tx, item)
    if retiring:
        release_rivals(tx, thread_id, uid)
    return item


def answer_question(tx: Transaction, thread_id: str, task_id: str, new_uid: str, old_uid: str, answer: Answer,
                    answered_by: str) -> list[StoredStateItem]:
    """Apply an answer to the open question "does new_uid replace old_uid, stand beside it, or say the same?"
    (core/open_conflicts.settle); the one it retires leaves its other questions too. Returns every item it
    changed, the pair first."""
    check_thread(tx, tx.namespace, task_id)
    new, old = load_item(tx, tx.namespace, thread_id, new_uid), load_item(tx, tx.namespace, thread_id, old_uid)
    settled = settle(answer, new, old, answered_by, tx.now)
    changed = [settled.new, settled.old]
    for item in changed:
        save_item(tx, item)
    for item in [settled.new, settled.old]:
        if not item.active:
            changed += [rival for rival in release_rivals(tx, thread_id, item.uid)
                        if rival.uid not in (settled.new.uid, settled.old.uid)]
    return changed


def release_rivals(tx: Transaction, thread_id: str, retired_uid: str) -> list[StoredStateItem]:
    """The conflict a retired item was in is settled for its rivals: each current item naming it in
    conflict_with drops it, and its conflict flag when no current rival is left (core/open_conflicts)."""
    current = {item.uid: item for item in thread_items(tx, tx.namespace, thread_id, include_superseded=False)}
    changed = released(retired_uid, current.values(), lambda uid: uid in current and uid != retired_uid)
    for rival in changed:
        rival.updated_at = tx.now
        save_item(tx, rival)
    return changed
