"""Learned pattern rows: record (a repeat counts up) and list."""

from __future__ import annotations

import json
from typing import Any

from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.patterns import Pattern
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction


def _from_row(row: Row) -> Pattern:
    return Pattern(namespace=row["namespace"], id=row["id"], pattern_type=row["pattern_type"],
                   pattern_key=row["pattern_key"], data=json.loads(row["data"]), frequency=row["frequency"],
                   created_at=row["created_at"], last_seen=row["last_seen"])


def record(tx: Transaction, pattern_type: str, pattern_key: str, data: dict[str, Any] | None) -> Pattern:
    """Insert with frequency 1, or add 1 to frequency and move last_seen (data replaced when given)."""
    encoded = json.dumps(data, separators=(",", ":"), allow_nan=False) if data is not None else None
    tx.execute(
        "INSERT INTO learned_patterns (namespace, id, pattern_type, pattern_key, data, frequency, created_at, last_seen)"
        " VALUES (?, ?, ?, ?, coalesce(?, '{}'), 1, ?, ?)"
        " ON CONFLICT (namespace, pattern_type, pattern_key) DO UPDATE SET"
        " frequency = learned_patterns.frequency + 1, last_seen = excluded.last_seen,"
        " data = coalesce(?, learned_patterns.data)",
        (tx.namespace, new_id("pat"), pattern_type, pattern_key, encoded, tx.now, tx.now, encoded))
    row = tx.fetchone("SELECT * FROM learned_patterns WHERE namespace = ? AND pattern_type = ? AND pattern_key = ?",
                      (tx.namespace, pattern_type, pattern_key))
    pattern = _from_row(row)  # type: ignore[arg-type]
    tx.emit(EventType.PATTERN_RECORDED, "", pattern)
    return pattern


def list_patterns(db: Reader, namespace: str, pattern_type: str, min_frequency: int, limit: int,
                  after: list[Any] | None) -> list[Pattern]:
    """Most frequent first, then most recently seen, then id; `after` is that key of the previous page's last row."""
    query = (PageQuery("learned_patterns", order=("frequency DESC", "last_seen DESC", "id"))
             .equals("namespace", namespace).equals("pattern_type", pattern_type))
    if min_frequency:
        query.where("frequency >= ?", min_frequency)
    return [_from_row(row) for row in query.after(after).fetch(db, limit)]
