"""A memory filter as the set of seqs it allows, read from the indexes of its constraints.

Used to narrow a search before it ranks: the vector index scans only these rows, and the full-text
ranking drops other matches before looking them up (store/memory_search.py).
"""

from __future__ import annotations

from typing import Any

from taskmem.core.memory import MemoryFilter


def filter_set_sql(namespace: str, f: MemoryFilter) -> tuple[str, list[Any]] | None:
    """A query of the seqs matching f's constraints (column `seq`), each read from its own index (task,
    subtask, type and time; tags; relevance_to) and intersected, and its parameters; None when f narrows
    nothing but the namespace. Sets of tags and relevance alone are not limited to the namespace: use it
    to narrow, and check the namespace (filter_sql) on what passes."""
    sets: list[str] = []
    params: list[Any] = []
    if f.task_id or f.subtask_id or f.types or f.created_after is not None or f.created_before is not None:
        clauses = ["namespace = ?"]
        params.append(namespace)
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
                    f"{having}")
        params.extend(f.tags)
    if f.relevance_to:
        sets.append(f"SELECT entry_seq AS seq FROM memory_entry_relevance WHERE subtask_id IN"
                    f" ({', '.join('?' * len(f.relevance_to))})")
        params.extend(f.relevance_to)
    if not sets:
        return None
    return " INTERSECT ".join(sets), params
