"""A memory filter as the set of seqs it allows, read from the indexes of its constraints.

Used to narrow a search before it ranks: the vector index scans only these rows, and the text index
scores only these (store/memory/memory_search.py). Sets are kept between searches (`filter_seqs`): an entry,
its tags and its relevance are written once and never changed, so a set only grows by the entries
written since it was read.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from taskmem.core.memory import MemoryFilter
from taskmem.store.access import Reader

# Sets kept: (database file, namespace, filter) → (newest seq when read, seqs). Reading one costs
# ~1 ms at 100k entries (a task's 5,000 or a tag's 10,000 seqs), and HYBRID's two halves each need it.
_KEPT_MAX = 64
_kept: dict[tuple[str, str, str], tuple[int, np.ndarray]] = {}
_kept_lock = threading.Lock()


def filter_seqs(reader: Reader, namespace: str, f: MemoryFilter) -> np.ndarray | None:
    """The seqs of entries matching f's constraints other than the namespace (filter_set_sql), ascending,
    or None when f has none. SQLite's (the in-memory indexes narrow by it)."""
    found = filter_set_sql(namespace, f)
    if found is None:
        return None
    newest = int(reader.fetchall("SELECT coalesce(max(seq), 0) FROM memory_entries")[0][0])
    path = str(reader.fetchall("PRAGMA database_list")[0][2])
    key = (path or str(id(reader.connection)), namespace, repr(f.key()))  # type: ignore[attr-defined]
    with _kept_lock:
        kept = _kept.get(key)
    if kept is not None and kept[0] == newest:
        return kept[1]
    if kept is not None and kept[0] < newest:
        seqs = np.concatenate((kept[1], _read(reader, *filter_set_sql(namespace, f, after=kept[0]))))  # type: ignore[misc]
    else:  # not kept, or another database file now at this path
        seqs = _read(reader, *found)
    with _kept_lock:
        if len(_kept) >= _KEPT_MAX:
            _kept.clear()
        _kept[key] = (newest, seqs)
    return seqs


def _read(reader: Reader, sql: str, params: list[Any]) -> np.ndarray:
    """The seqs of a set query, ascending, read as one group_concat string (a row per seq costs 3× as much)."""
    text = reader.fetchall(f"SELECT group_concat(seq) FROM (SELECT seq FROM ({sql}) ORDER BY seq)", params)[0][0]
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.empty(0, np.int64)


def filter_set_sql(namespace: str, f: MemoryFilter, after: int = 0) -> tuple[str, list[Any]] | None:
    """A query of the seqs matching f's constraints (column `seq`), each read from its own index (task,
    subtask, type and time; tags; relevance_to) and intersected, and its parameters; None when f narrows
    nothing but the namespace. Sets of tags and relevance alone are not limited to the namespace: use it
    to narrow, and check the namespace (filter_sql) on what passes. after: only seqs above it."""
    sets: list[str] = []
    params: list[Any] = []
    if f.task_id or f.subtask_id or f.types or f.created_after is not None or f.created_before is not None:
        clauses = ["namespace = ?", "seq > ?"]
        params.extend((namespace, after))
        for column, value in (("task_id", f.task_id), ("subtask_id", f.subtask_id)):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if f.types:
            clauses.append(f"type IN ({', '.join('?' * len(f.types))})")
            params.extend(t.value for t in f.types)
        if f.created_after is not None:
            clauses.append("created_at >= ?")
            params.append(f.created_after)
        if f.created_before is not None:
            clauses.append("created_at < ?")
            params.append(f.created_before)
        sets.append(f"SELECT seq FROM memory_entries WHERE {' AND '.join(clauses)}")
    if f.tags:
        having = f" GROUP BY entry_seq HAVING count(*) = {len(set(f.tags))}" if f.match_all_tags else ""
        sets.append(f"SELECT entry_seq AS seq FROM memory_entry_tags WHERE tag IN ({', '.join('?' * len(f.tags))})"
                    f" AND entry_seq > ?{having}")
        params.extend((*f.tags, after))
    if f.relevance_to:
        sets.append(f"SELECT entry_seq AS seq FROM memory_entry_relevance WHERE subtask_id IN"
                    f" ({', '.join('?' * len(f.relevance_to))}) AND entry_seq > ?")
        params.extend((*f.relevance_to, after))
    if not sets:
        return None
    return " INTERSECT ".join(sets), params
