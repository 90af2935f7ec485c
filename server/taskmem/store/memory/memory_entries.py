"""Memory entries: writing them (with tags, relevance, full text, vectors and events) and reading them by filter."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from taskmem.core.errors import InvalidArgument, NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.memory import ALWAYS_RELEVANT, MemoryEntry, MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.retention import Cap, Retention, entry_capped
from taskmem.store.memory import memory_vectors
from taskmem.store.memory.memory_filter_sql import filter_sql
from taskmem.store.unexpired import unexpired_sql
from taskmem.store.page_query import PageQuery
from taskmem.store.retention_caps import enforce_cap
from taskmem.store.access import Reader, Row, Transaction

_COLUMNS = "m.seq, m.namespace, m.id, m.task_id, m.subtask_id, m.type, m.summary, m.detail, m.source, m.created_at, m.expires_at"


def insert_memory_entries(tx: Transaction, entries: Sequence[NewMemoryEntry],
                          vectors: np.ndarray | None = None, retention: Retention = Retention()) -> list[MemoryEntry]:
    """Write entries into tx.namespace and emit one EVENT_TYPE_MEMORY_ENTRY_ADDED per entry.

    The one way any service writes memory entries; call it inside a mutation run by the
    group-commit writer (`storage.write(lambda tx: insert_memory_entries(tx, entries, vectors), …)`
    or inside your own mutation), so entries, their index rows and their events commit together.

    entries: already checked with `taskmem.core.memory.check_new_entry` (labels normalised).
    vectors: normally None: the entries join the embedding backlog (memory_embedding_queue, in the
        same transaction), which the server's background pass embeds right after the commit; they are
        found by full text at once and by meaning once embedded. A float32 array of shape
        (len(entries), dimension) instead stores those vectors at once (for callers that already hold
        them: benchmarks, tests, imports); embedding must never run in the writer thread.
    retention: the configured TTLs; each entry expires at its own expires_at, else as they say
        (Retention.entry_expiry), and its event expires with it; past the namespace's count cap the oldest
        capped entries expire at once (store/retention_caps.py).
    Returns the stored entries in input order. Raises NotFound when a task_id is not a task of
    the namespace, InvalidArgument when vectors do not fit the recorded embedding model.
    """
    for task_id in {entry.task_id for entry in entries}:
        if tx.fetchone("SELECT 1 FROM tasks WHERE namespace = ? AND id = ?", (tx.namespace, task_id)) is None:
            raise NotFound("task", task_id)
    if vectors is not None and len(vectors) != len(entries):
        raise InvalidArgument("vectors", f"has {len(vectors)} rows for {len(entries)} entries")
    stored: list[MemoryEntry] = []
    for entry in entries:
        entry_id = new_id("mem")
        expires_at = retention.entry_expiry(tx.namespace, entry, tx.now)
        inserted = tx.fetchone(
            "INSERT INTO memory_entries (namespace, id, task_id, subtask_id, type, summary, detail, source, created_at,"
            " expires_at, capped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (tx.namespace, entry_id, entry.task_id, entry.subtask_id, entry.type.value, entry.summary, entry.detail,
             entry.source, tx.now, expires_at, int(entry_capped(entry))))
        assert inserted is not None  # RETURNING gives the inserted row
        seq = int(inserted[0])
        if tx.dialect == "sqlite":  # PostgreSQL indexes a generated tsvector column of the row itself
            tx.execute("INSERT INTO memory_fts (rowid, summary, detail) VALUES (?, ?, ?)",
                       (seq, entry.summary, entry.detail))
        tx.executemany("INSERT INTO memory_entry_tags (tag, entry_seq) VALUES (?, ?)", [(t, seq) for t in entry.tags])
        tx.executemany("INSERT INTO memory_entry_relevance (subtask_id, entry_seq) VALUES (?, ?)",
                       [(s, seq) for s in entry.relevance_to])
        stored.append(MemoryEntry(
            namespace=tx.namespace, id=entry_id, seq=seq, task_id=entry.task_id, subtask_id=entry.subtask_id,
            type=entry.type, summary=entry.summary, detail=entry.detail, tags=tuple(sorted(entry.tags)),
            relevance_to=tuple(sorted(entry.relevance_to)), source=entry.source, created_at=tx.now,
            expires_at=expires_at))
    if vectors is not None and stored:
        memory_vectors.insert_vectors(tx, [(e.seq, e.task_id) for e in stored], vectors)
    elif stored:
        tx.executemany("INSERT INTO memory_embedding_queue (seq) VALUES (?)", [(e.seq,) for e in stored])
    for entry in stored:
        tx.emit(EventType.MEMORY_ENTRY_ADDED, entry.task_id, entry).expires_at = entry.expires_at
    pushed_out = set(enforce_cap(tx, "memory_entries", retention.cap(tx.namespace, Cap.MEMORY_ENTRIES)))
    return [dataclasses.replace(e, expires_at=tx.now) if e.id in pushed_out else e for e in stored]


def _with_labels(reader: Reader, rows: list[Row]) -> list[MemoryEntry]:
    """Entries of rows, each with its tags and relevance_to (two queries for the whole list)."""
    if not rows:
        return []
    seqs = [row["seq"] for row in rows]
    marks = ", ".join("?" * len(seqs))
    tags: dict[int, list[str]] = {}
    for row in reader.fetchall(f"SELECT entry_seq, tag FROM memory_entry_tags WHERE entry_seq IN ({marks})", seqs):
        tags.setdefault(row[0], []).append(row[1])
    relevance: dict[int, list[str]] = {}
    for row in reader.fetchall(
            f"SELECT entry_seq, subtask_id FROM memory_entry_relevance WHERE entry_seq IN ({marks})", seqs):
        relevance.setdefault(row[0], []).append(row[1])
    return [MemoryEntry(
        namespace=row["namespace"], id=row["id"], seq=row["seq"], task_id=row["task_id"],
        subtask_id=row["subtask_id"], type=MemoryType(row["type"]), summary=row["summary"], detail=row["detail"],
        tags=tuple(sorted(tags.get(row["seq"], ()))), relevance_to=tuple(sorted(relevance.get(row["seq"], ()))),
        source=row["source"], created_at=row["created_at"], expires_at=row["expires_at"]) for row in rows]


def query_entries(reader: Reader, namespace: str, f: MemoryFilter, limit: int,
                  after: tuple[int, int] | None = None) -> list[MemoryEntry]:
    """Entries matching f, newest first (created_at, seq descending), starting after the (created_at, seq) key."""
    where, params = filter_sql(f, namespace)
    rows = (PageQuery("memory_entries m", order=("m.created_at DESC", "m.seq DESC"), columns=_COLUMNS)
            .where(where, *params).after(after).fetch(reader, limit))
    return _with_labels(reader, rows)


def relevant_entries(reader: Reader, namespace: str, task_id: str, subtask_id: str, limit: int,
                     at: int | None = None) -> list[MemoryEntry]:
    """Of one task: entries of the subtask, entries whose relevance_to names it, and every decision,
    error and user instruction (at: written by then); newest first."""
    always = ", ".join("?" * len(ALWAYS_RELEVANT))
    unexpired, now = unexpired_sql("m")
    rows = reader.fetchall(
        f"SELECT {_COLUMNS} FROM memory_entries m WHERE m.namespace = ? AND m.task_id = ? AND m.created_at <= ?"
        f" AND {unexpired} AND ("
        f" m.type IN ({always})"
        " OR (? != '' AND m.subtask_id = ?)"
        " OR m.seq IN (SELECT entry_seq FROM memory_entry_relevance WHERE subtask_id = ?))"
        " ORDER BY m.created_at DESC, m.seq DESC LIMIT ?",
        [namespace, task_id, 2**63 - 1 if at is None else at, *now, *(t.value for t in ALWAYS_RELEVANT), subtask_id,
         subtask_id, subtask_id, limit])
    return _with_labels(reader, rows)


def entries_by_seq(reader: Reader, namespace: str, seqs: Sequence[int], f: MemoryFilter | None = None) -> dict[int, MemoryEntry]:
    """The entries with these seqs that are in the namespace (and match f, if given)."""
    if not seqs:
        return {}
    where, params = filter_sql(f or MemoryFilter(), namespace, per_row=True)
    # NOT INDEXED: look the seqs up by primary key; SQLite would otherwise walk the namespace's
    # whole (namespace, …) index and check each row against the list (10 ms at 100k entries).
    rows = reader.fetchall(f"SELECT {_COLUMNS} FROM memory_entries m NOT INDEXED"
                           f" WHERE m.seq IN ({', '.join('?' * len(seqs))}) AND {where}", [*seqs, *params])
    return {entry.seq: entry for entry in _with_labels(reader, rows)}

