"""Store items (core/store_items.py): their rows, the memory entries that index them, and retention's sweep.

An indexed item's text is a memory entry (type CONTEXT, source "store", pinned: the item's own TTL governs
it) of the namespace's store task, tagged by its path's prefixes; when the item changes, is deleted or
expires, that entry is retired by expiring it at once, so every search leaves it out from then and
maintenance deletes it with its index rows (store/expired_items.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskmem.core import store_items as core
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.memory import MemoryType, NewMemoryEntry, SUMMARY_MAX, check_new_entry
from taskmem.core.store_items import StoreItem, StoreWrite
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.access import Reader, Row, Transaction
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.tasks.tasks import create_task, load_task

STORE_TASK_NAME = "LangGraph store"
DETAIL_MAX = 65_536
_COLUMNS = "path_key, key, value, created_at, updated_at, expires_at, ttl_us, memory_entry_id"
_UNEXPIRED = "(expires_at IS NULL OR expires_at > ?)"


def store_task_id(tx: Transaction, requested: str) -> str:
    """The task that holds the namespace's store events and index entries: requested, else the namespace's
    store task (made on first use)."""
    if requested:
        return load_task(tx, tx.namespace, requested).id
    key = ("store_task",)
    if key in tx.memo:
        return str(tx.memo[key])
    row = tx.fetchone("SELECT task_id FROM store_tasks WHERE namespace = ?", (tx.namespace,))
    if row is not None:
        task_id = str(row[0])
    else:
        task = Task(namespace=tx.namespace, id=new_id("tsk"), name=STORE_TASK_NAME, status=TaskStatus.EXECUTING,
                    created_at=tx.now, updated_at=tx.now, execution_started_at=tx.now)
        create_task(tx, task, [])
        tx.execute("INSERT INTO store_tasks (namespace, task_id) VALUES (?, ?)", (tx.namespace, task.id))
        task_id = task.id
    tx.memo[key] = task_id
    return task_id


def put_items(tx: Transaction, writes: Sequence[StoreWrite], requested_task: str) -> tuple[int, int]:
    """Apply the writes in order; returns (put, deleted)."""
    task_id = store_task_id(tx, requested_task)
    put = deleted = 0
    for write in writes:
        stored = _find(tx, tx.namespace, write.path, write.key, None, lock=True)
        if stored is not None and stored.memory_entry_id:
            _retire_entries(tx, [stored.memory_entry_id])
        old = stored if stored is not None and (stored.expires_at is None or stored.expires_at > tx.now) else None
        if not write.value_json:
            if old is not None:
                tx.execute("DELETE FROM store_items WHERE namespace = ? AND path_key = ? AND key = ?",
                           (tx.namespace, core.path_key(write.path), write.key))
                tx.emit(EventType.STORE_ITEM_DELETED, task_id, None,
                        {"path": list(write.path), "key": write.key, "reason": "deleted"})
                deleted += 1
            continue
        entry_id = _index(tx, task_id, write) if write.index_text else ""
        created = old.created_at if old is not None else tx.now
        expires = tx.now + write.ttl_us if write.ttl_us else None
        tx.execute(
            f"INSERT INTO store_items (namespace, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (namespace, path_key, key) DO UPDATE SET value = excluded.value,"
            " created_at = excluded.created_at, updated_at = excluded.updated_at, expires_at = excluded.expires_at,"
            " ttl_us = excluded.ttl_us, memory_entry_id = excluded.memory_entry_id",
            (tx.namespace, core.path_key(write.path), write.key, write.value_json, created, tx.now, expires,
             write.ttl_us, entry_id))
        tx.emit(EventType.STORE_ITEM_PUT, task_id, None, {
            "path": list(write.path), "key": write.key, "memory_entry_id": entry_id,
            "size_bytes": len(write.value_json.encode())})
        put += 1
    return put, deleted


def _index(tx: Transaction, task_id: str, write: StoreWrite) -> str:
    text = write.index_text.strip() or write.key
    entry = check_new_entry(NewMemoryEntry(
        task_id=task_id, type=MemoryType.CONTEXT, summary=_summary(text), detail=text[:DETAIL_MAX],
        tags=core.path_tags(write.path), source="store", pinned=True))
    stored = insert_memory_entries(tx, [entry])
    return stored[0].id


def _summary(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SUMMARY_MAX else flat[:SUMMARY_MAX - 1] + "…"


def _retire_entries(tx: Transaction, entry_ids: Sequence[str]) -> None:
    """Expire the entries now: every read leaves them out from this instant, maintenance deletes them."""
    tx.execute(f"UPDATE memory_entries SET expires_at = ? WHERE namespace = ? AND id IN"
               f" ({', '.join('?' * len(entry_ids))})", (tx.now, tx.namespace, *entry_ids))
    tx.unexplained = True  # cached views may hold the entries; their events say nothing of this


def get_items(db: Reader, namespace: str, keys: Sequence[tuple[tuple[str, ...], str]], now: int) -> list[StoreItem]:
    found = (_find(db, namespace, path, key, now) for path, key in keys)
    return [item for item in found if item is not None]


def refresh(tx: Transaction, items: Sequence[StoreItem]) -> list[StoreItem]:
    """Move each item's expiry to now + its TTL; returns the items as they now are."""
    refreshed = []
    for item in items:
        if item.ttl_us:
            expires = tx.now + item.ttl_us
            tx.execute("UPDATE store_items SET expires_at = ? WHERE namespace = ? AND path_key = ? AND key = ?",
                       (expires, tx.namespace, core.path_key(item.path), item.key))
            item = StoreItem(item.path, item.key, item.value_json, item.created_at, item.updated_at, expires,
                             item.ttl_us, item.memory_entry_id)
        refreshed.append(item)
    tx.quiet = True  # a refreshed expiry is no change any view shows
    return refreshed


def items_under(db: Reader, namespace: str, prefix: Sequence[str], now: int) -> list[StoreItem]:
    """Every unexpired item under the prefix, most recently put first."""
    bounds = core.prefix_range(prefix)
    where = " AND path_key >= ? AND path_key < ?" if bounds else ""
    rows = db.fetchall(f"SELECT {_COLUMNS} FROM store_items WHERE namespace = ? AND {_UNEXPIRED}{where}"
                       " ORDER BY updated_at DESC, path_key, key", (namespace, now, *(bounds or ())))
    return [_item(row) for row in rows]


def items_of_entries(db: Reader, namespace: str, entry_ids: Sequence[str], now: int) -> dict[str, StoreItem]:
    if not entry_ids:
        return {}
    rows = db.fetchall(f"SELECT {_COLUMNS} FROM store_items WHERE namespace = ? AND {_UNEXPIRED}"
                       f" AND memory_entry_id IN ({', '.join('?' * len(entry_ids))})", (namespace, now, *entry_ids))
    return {item.memory_entry_id: item for item in map(_item, rows)}


def paths(db: Reader, namespace: str, now: int) -> list[tuple[str, ...]]:
    rows = db.fetchall(f"SELECT DISTINCT path_key FROM store_items WHERE namespace = ? AND {_UNEXPIRED}",
                       (namespace, now))
    return [core.path_of(str(row[0])) for row in rows]


def delete_expired(tx: Transaction, page: int) -> int:
    """Retention: delete up to `page` of tx.namespace's expired items and retire their index entries."""
    rows = tx.fetchall(f"SELECT {_COLUMNS} FROM store_items WHERE expires_at <= ? AND namespace = ?"
                       " ORDER BY expires_at LIMIT ?", (tx.now, tx.namespace, page))
    items = [_item(row) for row in rows]
    if not items:
        return 0
    entries = [item.memory_entry_id for item in items if item.memory_entry_id]
    if entries:
        _retire_entries(tx, entries)
    task_id = store_task_id(tx, "")
    for item in items:
        tx.execute("DELETE FROM store_items WHERE namespace = ? AND path_key = ? AND key = ?",
                   (tx.namespace, core.path_key(item.path), item.key))
        tx.emit(EventType.STORE_ITEM_DELETED, task_id, None,
                {"path": list(item.path), "key": item.key, "reason": "expired"})
    return len(items)


def namespaces_with_expired(db: Reader, now: int) -> list[str]:
    return [str(row[0]) for row in db.fetchall("SELECT DISTINCT namespace FROM store_items WHERE expires_at <= ?",
                                               (now,))]


def _find(db: Reader, namespace: str, path: Sequence[str], key: str, now: int | None,
          lock: bool = False) -> StoreItem | None:
    """The item (now None: expired or not)."""
    unexpired = f" AND {_UNEXPIRED}" if now is not None else ""
    row = db.fetchone(f"SELECT {_COLUMNS} FROM store_items WHERE namespace = ? AND path_key = ? AND key = ?"
                      f"{unexpired}{db.row_lock if lock else ''}",
                      (namespace, core.path_key(path), key, *([now] if now is not None else [])))
    return _item(row) if row is not None else None


def _item(row: Row) -> StoreItem:
    def optional(value: Any) -> int | None:
        return int(value) if value is not None else None

    return StoreItem(core.path_of(str(row[0])), str(row[1]), str(row[2]), int(row[3]), int(row[4]),
                     optional(row[5]), optional(row[6]), str(row[7]))
