"""The SQL WHERE clause a MemoryFilter means over memory_entries, shared by both engines' searches.

Its own module so the PostgreSQL index (store/postgres/memory_index.py) can use it without importing
memory_entries, which reaches that index through memory_vectors.
"""

from __future__ import annotations

from typing import Any

from taskmem.core.memory import MemoryFilter
from taskmem.store.unexpired import unexpired_sql


def filter_sql(f: MemoryFilter, namespace: str, alias: str = "m", per_row: bool = False,
               with_expired: bool = False) -> tuple[str, list[Any]]:
    """A WHERE clause (without the keyword) over memory_entries AS alias, and its parameters; expired
    entries never match.

    per_row: test tags and relevance_to with a lookup per row (EXISTS) rather than by building the
    set of every entry carrying them; the faster form when checking a few rows already chosen.
    with_expired: expired entries not yet deleted match too: for statistics only (PostgreSQL's BM25 counts
    its entries index-only, which a test of expires_at would turn into a visit of every row)."""
    clauses = [f"{alias}.namespace = ?"]
    params: list[Any] = [namespace]
    if not with_expired:
        unexpired, now = unexpired_sql(alias)
        clauses.append(unexpired)
        params.extend(now)
    if f.task_id:
        clauses.append(f"{alias}.task_id = ?")
        params.append(f.task_id)
    if f.subtask_id:
        clauses.append(f"{alias}.subtask_id = ?")
        params.append(f.subtask_id)
    if f.types:
        clauses.append(f"{alias}.type IN ({', '.join('?' * len(f.types))})")
        params.extend(t.value for t in f.types)
    if f.tags and f.match_all_tags:
        for tag in f.tags:
            clauses.append(f"EXISTS (SELECT 1 FROM memory_entry_tags t WHERE t.entry_seq = {alias}.seq AND t.tag = ?)")
            params.append(tag)
    elif f.tags and per_row:
        clauses.append(f"EXISTS (SELECT 1 FROM memory_entry_tags t WHERE t.entry_seq = {alias}.seq AND t.tag IN"
                       f" ({', '.join('?' * len(f.tags))}))")
        params.extend(f.tags)
    elif f.tags:
        clauses.append(f"{alias}.seq IN (SELECT entry_seq FROM memory_entry_tags WHERE tag IN"
                       f" ({', '.join('?' * len(f.tags))}))")
        params.extend(f.tags)
    if f.relevance_to and per_row:
        clauses.append(f"EXISTS (SELECT 1 FROM memory_entry_relevance r WHERE r.entry_seq = {alias}.seq"
                       f" AND r.subtask_id IN ({', '.join('?' * len(f.relevance_to))}))")
        params.extend(f.relevance_to)
    elif f.relevance_to:
        clauses.append(f"{alias}.seq IN (SELECT entry_seq FROM memory_entry_relevance WHERE subtask_id IN"
                       f" ({', '.join('?' * len(f.relevance_to))}))")
        params.extend(f.relevance_to)
    if f.created_after is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(f.created_after)
    if f.created_before is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(f.created_before)
    return " AND ".join(clauses), params
