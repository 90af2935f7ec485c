"""Searching memory entries: FTS5 ranked by BM25 with snippets, the vec0 KNN, and both fused.

`search_entries` is what SearchMemories runs in one reader-thread hop: each mode's ranked list,
narrowed by the filter, the fusion for HYBRID, and the entries of the hits.
"""

from __future__ import annotations

import numpy as np

from taskmem.core.memory import MemoryEntry, MemoryFilter
from taskmem.core.memory_search import Hit, SearchMode, candidate_count, reciprocal_rank_fusion
from taskmem.store import memory_vectors
from taskmem.store.memory_entries import entries_by_seq, filter_sql
from taskmem.store.writer import Reader

# BM25 column weights: a match in the summary counts twice one in the detail.
_WEIGHTS = "2.0, 1.0"
SNIPPET_TOKENS = 16
# fulltext() first ranks this many matches per wanted hit from the index alone, at most MAX_LOOK.
FIRST_LOOK = 4
MAX_LOOK = 4096


def fulltext(reader: Reader, namespace: str, match: str, f: MemoryFilter, limit: int) -> list[tuple[int, float, str]]:
    """(seq, bm25, snippet) of the best `limit` entries of the namespace matching the FTS5 expression
    and f, best first. bm25 is SQLite's (lower is better, negative); the snippet marks each match with [ ]."""
    rows = ranked_matches(reader, namespace, match, f, limit)
    return [(seq, rank, snippet) for (seq, rank), snippet in zip(rows, _snippets(reader, match, [s for s, _ in rows]))]


def ranked_matches(reader: Reader, namespace: str, match: str, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    """fulltext() without the snippets: (seq, bm25), best first."""
    if not match or limit <= 0:
        return []
    where, params = filter_sql(f, namespace, per_row=True)
    # The index ranks its best `look` matches alone (bm25 of every match, no row lookups); those are
    # checked against the filter by primary key (NOT INDEXED: SQLite would otherwise walk a namespace
    # index). One look suffices whenever most matches pass (one namespace, no narrow filter); a narrow
    # filter looks 8 times further each round, and past MAX_LOOK every match is checked in one join
    # that the full-text index drives (CROSS JOIN keeps SQLite from turning it round).
    look = limit * FIRST_LOOK
    checked = 0
    rows: list[tuple[int, float]] = []
    while look <= MAX_LOOK:
        ranked = reader.fetchall(
            f"SELECT rowid, bm25(memory_fts, {_WEIGHTS}) AS rank FROM memory_fts WHERE memory_fts MATCH ?"
            " ORDER BY rank, rowid LIMIT ?", [match, look])
        fresh = ranked[checked:]
        if fresh:
            passing = {int(row[0]) for row in reader.fetchall(
                f"SELECT m.seq FROM memory_entries m NOT INDEXED WHERE m.seq IN ({', '.join('?' * len(fresh))})"
                f" AND {where}", [*(row[0] for row in fresh), *params])}
            rows.extend((int(row[0]), float(row[1])) for row in fresh if row[0] in passing)
        checked = len(ranked)
        if len(rows) >= limit or len(ranked) < look:
            return rows[:limit]
        look *= 8
    return [(int(row[0]), float(row[1])) for row in reader.fetchall(
        f"SELECT memory_fts.rowid, bm25(memory_fts, {_WEIGHTS}) AS rank FROM memory_fts"
        f" CROSS JOIN memory_entries m ON m.seq = memory_fts.rowid WHERE memory_fts MATCH ? AND {where}"
        " ORDER BY rank, memory_fts.rowid LIMIT ?", [match, *params, limit])]


def _snippets(reader: Reader, match: str, seqs: list[int]) -> list[str]:
    """The snippet of each entry (by seq) for the match, in order; computed for these rows only."""
    found: dict[int, str] = {}
    for seq in seqs:
        row = reader.fetchone(f"SELECT snippet(memory_fts, -1, '[', ']', '…', {SNIPPET_TOKENS}) FROM memory_fts"
                              " WHERE memory_fts MATCH ? AND rowid = ?", (match, seq))
        found[seq] = str(row[0]) if row is not None else ""
    return [found[seq] for seq in seqs]


def semantic(reader: Reader, namespace: str, vector: np.ndarray, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    """(seq, cosine distance) of the `limit` entries of the namespace nearest to vector that match f, nearest first."""
    return memory_vectors.nearest(reader, namespace, vector, limit, f=f)


def search_hits(reader: Reader, namespace: str, match: str, vector: np.ndarray | None, mode: SearchMode,
                f: MemoryFilter, limit: int) -> list[Hit]:
    """The best `limit` hits of the mode, best first. match is an FTS5 expression (core.memory_search.fts_query);
    vector the query's embedding (required for SEMANTIC and HYBRID)."""
    if mode is SearchMode.FULLTEXT:
        return [Hit(seq, -bm25, fulltext_rank=rank, snippet=snippet)
                for rank, (seq, bm25, snippet) in enumerate(fulltext(reader, namespace, match, f, limit), start=1)]
    if vector is None:
        raise ValueError(f"{mode} search needs the query's embedding")
    if mode is SearchMode.SEMANTIC:
        return [Hit(seq, 1.0 - distance, semantic_rank=rank)
                for rank, (seq, distance) in enumerate(semantic(reader, namespace, vector, f, limit), start=1)]
    candidates = candidate_count(limit)
    texts = ranked_matches(reader, namespace, match, f, candidates)
    near = semantic(reader, namespace, vector, f, candidates)
    hits = reciprocal_rank_fusion([(seq, "") for seq, _ in texts], [seq for seq, _ in near], limit)
    # Snippets only for the hits that made the cut (each costs a full-text lookup).
    found = [hit for hit in hits if hit.fulltext_rank]
    for hit, snippet in zip(found, _snippets(reader, match, [hit.seq for hit in found])):
        hit.snippet = snippet
    return hits


def search_entries(reader: Reader, namespace: str, match: str, vector: np.ndarray | None, mode: SearchMode,
                   f: MemoryFilter, limit: int) -> list[tuple[Hit, MemoryEntry]]:
    """search_hits with each hit's entry (tags and relevance_to included), best first."""
    hits = search_hits(reader, namespace, match, vector, mode, f, limit)
    entries = entries_by_seq(reader, namespace, [hit.seq for hit in hits])
    return [(hit, entries[hit.seq]) for hit in hits if hit.seq in entries]
