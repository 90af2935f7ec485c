"""Count caps (core/retention.py): a write that takes a namespace past its cap for a kind expires the oldest
live items the cap applies to, in the write's own transaction.

Expiring is setting expires_at to the write's time, so every read, which already leaves out what has
expired, leaves them out from the commit on, and maintenance deletes them and strips their events as it
does any expired item's (expired_items.py). Their events expire with them: those already stored are found
by namespace and time (an item's created_at is its event's) and the id in their payload; those of this
batch, not stored yet, among the batch's emitted events.

The count is of the namespace's live capped items (the `capped` flag stamped at write time), one walk of a
partial index holding exactly those rows with their expiry: its cost grows with the cap (measured in
bench/retention_bench.py --cap).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskmem.core.events import EventType
from taskmem.store.access import Transaction
from taskmem.store.event_log import item_events

# Per kind: the table, its tie-breaker after created_at, and the type of the event that carries an item.
_KINDS = {
    "memory_entries": ("seq", EventType.MEMORY_ENTRY_ADDED),
    "messages": ("id", EventType.MESSAGE_POSTED),
}


def enforce_cap(tx: Transaction, table: str, cap: int) -> list[str]:
    """Expire tx.namespace's oldest live capped items of `table` beyond `cap` (0: no cap), and their events;
    returns their ids."""
    if cap <= 0:
        return []
    tie, event_type = _KINDS[table]
    # capped = 1 a literal: a partial index is chosen only when the query repeats its condition.
    live = "namespace = ? AND capped = 1 AND (expires_at IS NULL OR expires_at > ?)"
    params: list[Any] = [tx.namespace, tx.now]
    row = tx.fetchone(f"SELECT count(*) FROM {table} WHERE {live}", params)
    excess = int(row[0]) - cap if row is not None else 0
    if excess <= 0:
        return []
    oldest = tx.fetchall(f"SELECT {tie}, id, created_at, task_id FROM {table} WHERE {live}"
                         f" ORDER BY created_at, {tie} LIMIT ?", [*params, excess])
    marks = ", ".join("?" * len(oldest))
    tx.execute(f"UPDATE {table} SET expires_at = ? WHERE namespace = ? AND {tie} IN ({marks})",
               [tx.now, tx.namespace, *(r[0] for r in oldest)])
    ids = [str(r[1]) for r in oldest]
    if {r[3] for r in oldest} - {event.task_id for event in tx.events}:
        tx.unexplained = True  # another task's cached reads may hold them
    _expire_events(tx, event_type, ids, sorted({int(r[2]) for r in oldest}))
    return ids


def _expire_events(tx: Transaction, event_type: EventType, ids: Sequence[str], times: Sequence[int]) -> None:
    """Expire now the events of type `event_type` that carried these items (created at these times)."""
    wanted = set(ids)
    for event in tx.unstored_events():
        if event.namespace == tx.namespace and event.type is event_type and event.payload.get("id") in wanted:
            event.expires_at = tx.now
    cursors = [(tx.now, cursor) for cursor, _, _ in item_events(tx, tx.namespace, event_type, times, wanted, tx.now)]
    if cursors:
        tx.executemany("UPDATE events SET expires_at = ? WHERE cursor = ?", cursors)
