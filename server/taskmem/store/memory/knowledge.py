"""Project knowledge rows: upsert with confidence arbitration (losers kept in history), reads, delete."""

from __future__ import annotations

import dataclasses
from typing import Any

from taskmem.core.errors import NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.knowledge import (
    Knowledge, KnowledgeCategory, KnowledgeValue, UpsertOutcome, ValueOutcome, arbitrate, value_at,
)
from taskmem.core.valid_time import AsOf
from taskmem.store.page_query import PageQuery
from taskmem.store.as_of import resolve
from taskmem.store.access import Reader, Row, Transaction
from taskmem.store.event_log import item_events


def _from_row(row: Row, history: tuple[KnowledgeValue, ...] = ()) -> Knowledge:
    return Knowledge(namespace=row["namespace"], id=row["id"], category=KnowledgeCategory(row["category"]),
                     key=row["key"], value=row["value"], source=row["source"], confidence=row["confidence"],
                     revision=row["revision"], created_at=row["created_at"], updated_at=row["updated_at"],
                     history=history, valid_from=row["valid_from"])


def _history(db: Reader, namespace: str, knowledge_id: str) -> tuple[KnowledgeValue, ...]:
    rows = db.fetchall("SELECT value, source, confidence, outcome, written_at, recorded_at FROM knowledge_history"
                       " WHERE namespace = ? AND knowledge_id = ? ORDER BY seq", (namespace, knowledge_id))
    return tuple(KnowledgeValue(row["value"], row["source"], row["confidence"], row["written_at"],
                                ValueOutcome(row["outcome"]),
                                row["recorded_at"] if row["outcome"] == ValueOutcome.REPLACED.value else None)
                 for row in rows)


def _with_cursors(db: Reader, namespace: str, knowledge_id: str,
                  history: tuple[KnowledgeValue, ...]) -> tuple[KnowledgeValue, ...]:
    """Each value with the cursor of the KNOWLEDGE_UPSERTED event that wrote it (its time is the value's
    written_at; the event log's own TTL may have deleted it: 0 then)."""
    times = sorted({value.written_at for value in history})
    cursors: dict[int, int] = {}
    for cursor, created_at, _ in item_events(db, namespace, EventType.KNOWLEDGE_UPSERTED, times, [knowledge_id]):
        cursors.setdefault(created_at, cursor)
    return tuple(dataclasses.replace(value, cursor=cursors.get(value.written_at, 0)) for value in history)


def _keep(tx: Transaction, knowledge_id: str, value: KnowledgeValue, outcome: ValueOutcome) -> None:
    tx.execute("INSERT INTO knowledge_history (namespace, knowledge_id, value, source, confidence, outcome,"
               " written_at, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (tx.namespace, knowledge_id, value.value, value.source, value.confidence, outcome.value,
                value.written_at, tx.now))


def upsert(tx: Transaction, category: KnowledgeCategory, key: str, value: str, source: str,
           confidence: float) -> tuple[Knowledge, UpsertOutcome]:
    """Write (category, key) → value; emits KNOWLEDGE_UPSERTED with the outcome."""
    incoming = KnowledgeValue(value, source, confidence, tx.now)
    row = tx.fetchone("SELECT * FROM knowledge WHERE namespace = ? AND category = ? AND key = ?",
                      (tx.namespace, category.value, key))
    if row is None:
        knowledge_id = new_id("kn")
        tx.execute("INSERT INTO knowledge (namespace, id, category, key, value, source, confidence, revision,"
                   " created_at, updated_at, valid_from) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
                   (tx.namespace, knowledge_id, category.value, key, value, source, confidence, tx.now, tx.now,
                    tx.now))
        outcome = UpsertOutcome.CREATED
    else:
        knowledge_id = row["id"]
        # The value held from valid_from (its history row says so once it is replaced).
        current = KnowledgeValue(row["value"], row["source"], row["confidence"], row["valid_from"])
        outcome = arbitrate(current, incoming)
        if outcome is UpsertOutcome.REPLACED:
            _keep(tx, knowledge_id, current, ValueOutcome.REPLACED)
            tx.execute("UPDATE knowledge SET value = ?, source = ?, confidence = ?, revision = revision + 1,"
                       " updated_at = ?, valid_from = ? WHERE namespace = ? AND id = ?",
                       (value, source, confidence, tx.now, tx.now, tx.namespace, knowledge_id))
        elif outcome is UpsertOutcome.REJECTED:
            _keep(tx, knowledge_id, incoming, ValueOutcome.REJECTED)
        elif confidence >= current.confidence and (source, confidence) != (current.source, current.confidence):
            tx.execute("UPDATE knowledge SET source = ?, confidence = ?, revision = revision + 1, updated_at = ?"
                       " WHERE namespace = ? AND id = ?", (source, confidence, tx.now, tx.namespace, knowledge_id))
    knowledge = get(tx, tx.namespace, knowledge_id)
    tx.emit(EventType.KNOWLEDGE_UPSERTED, "", knowledge, {"outcome": outcome.value})
    return knowledge, outcome


def get(db: Reader, namespace: str, knowledge_id: str) -> Knowledge:
    row = db.fetchone("SELECT * FROM knowledge WHERE namespace = ? AND id = ?", (namespace, knowledge_id))
    if row is None:
        raise NotFound("knowledge", knowledge_id)
    return _from_row(row, _history(db, namespace, knowledge_id))


def get_by_key(db: Reader, namespace: str, category: KnowledgeCategory, key: str) -> Knowledge:
    row = db.fetchone("SELECT id FROM knowledge WHERE namespace = ? AND category = ? AND key = ?",
                      (namespace, category.value, key))
    if row is None:
        raise NotFound("knowledge", f"{category.value}/{key}")
    return get(db, namespace, row["id"])


def query(db: Reader, namespace: str, category: KnowledgeCategory | None, key_prefix: str, text: str,
          limit: int, after: list[Any] | None, at: int | None = None, with_history: bool = False) -> list[Knowledge]:
    """Ordered by (category, key), starting after the (category, key) pair `after`. at: each entry as it
    stood then (entries created later left out; the text filter matches the value that held then);
    with_history: each entry's history filled."""
    if at is None:
        rows = _query(namespace, category, key_prefix, text, None).after(after).fetch(db, limit)
        return [_from_row(row, _with_cursors(db, namespace, row["id"], _history(db, namespace, row["id"]))
                          if with_history else ()) for row in rows]
    found: list[Knowledge] = []
    while len(found) < limit:
        rows = _query(namespace, category, key_prefix, "", at).after(after).fetch(db, limit)
        for row in rows:
            replaced_since = row["valid_from"] > at  # the value then is in the history
            history = _history(db, namespace, row["id"]) if with_history or replaced_since else ()
            history = _with_cursors(db, namespace, row["id"], history) if with_history else history
            then = value_at(_from_row(row, history), at)
            if then is not None and (not text or text.lower() in f"{then.key}\n{then.value}".lower()):
                found.append(then if with_history else dataclasses.replace(then, history=()))
        if len(rows) < limit:
            break
        after = [rows[-1]["category"], rows[-1]["key"]]
    return found[:limit]


def _query(namespace: str, category: KnowledgeCategory | None, key_prefix: str, text: str,
           at: int | None) -> PageQuery:
    query = (PageQuery("knowledge", order=("category", "key"))
             .equals("namespace", namespace).equals("category", category.value if category is not None else None))
    if key_prefix:
        query.where("substr(key, 1, ?) = ?", len(key_prefix), key_prefix)
    if text:
        query.where("(instr(lower(key), lower(?)) > 0 OR instr(lower(value), lower(?)) > 0)", text, text)
    if at is not None:
        query.where("created_at <= ?", at)
    return query


def delete(tx: Transaction, knowledge_id: str) -> Knowledge:
    knowledge = get(tx, tx.namespace, knowledge_id)
    tx.execute("DELETE FROM knowledge_history WHERE namespace = ? AND knowledge_id = ?", (tx.namespace, knowledge_id))
    tx.execute("DELETE FROM knowledge WHERE namespace = ? AND id = ?", (tx.namespace, knowledge_id))
    tx.emit(EventType.KNOWLEDGE_DELETED, "", knowledge)
    return knowledge


def query_as_of(db: Reader, namespace: str, category: KnowledgeCategory | None, key_prefix: str, text: str,
                limit: int, after: list[Any] | None, as_of: AsOf | None, with_history: bool) -> list[Knowledge]:
    """QueryKnowledge's read: query() at the moment as_of names (None: now)."""
    moment = resolve(db, namespace, as_of)
    return query(db, namespace, category, key_prefix, text, limit, after, moment.at if moment else None, with_history)
