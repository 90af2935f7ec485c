"""Searching memory entries: FTS5 ranked by BM25 with snippets, the nearest vectors, and both fused.

On PostgreSQL the full-text and nearest-neighbour halves run on tsvector and pgvector instead
(store/postgres/memory_index.py says where their scores differ); fusion and filters are the same.

`search_entries` runs a search in one reader-thread hop: each mode's ranked list, narrowed by the
filter, the fusion for HYBRID, and the entries of the hits. SearchMemories (memory/archive.py) runs
HYBRID's halves, `fulltext_candidates` and `semantic_candidates`, in two reader threads at once and
then `fused_hits`.
"""

from __future__ import annotations

import numpy as np

from taskmem.core.memory import MemoryEntry, MemoryFilter
from taskmem.core.memory_search import FullTextQuery, Hit, SearchMode, candidate_count, reciprocal_rank_fusion
from taskmem.store import memory_vectors
from taskmem.store.memory_entries import entries_by_seq, filter_sql
from taskmem.store.memory_filter_sets import filter_set_sql
from taskmem.store.postgres import memory_index
from taskmem.store.storage import Reader

# BM25 column weights: a match in the summary counts twice one in the detail.
_WEIGHTS = "2.0, 1.0"
SNIPPET_TOKENS = 16
# An unfiltered fulltext() first ranks this many matches per wanted hit from the index alone.
FIRST_LOOK = 4
# Words in more than half of all entries are left out of a query once the index holds this many entries.
COMMON_WORDS_FROM = 2000

Match = str | FullTextQuery
# (database file, word) → (in more than half of the entries?, entries when counted); shared by the
# reader threads of every database the process has open.
_common: dict[tuple[str, str], tuple[bool, int]] = {}
_COMMON_CACHE_MAX = 50_000


def common_words(reader: Reader, words: tuple[str, ...]) -> frozenset[str]:
    """Of words, those in more than half of all entries (none while the index is small).

    FTS5's BM25 gives such a word no weight (its idf, log((N - n + 0.5) / (n + 0.5)), is ≤ 0 and clamped
    to 1e-6), yet ranking costs per matching entry: at 100k entries one word in 60 % of them took the
    ranking from 4 ms to 80+ ms. Leaving it out changes no score that counts. Counts are capped at half
    the entries (at most a few ms) and kept until the index grows by a tenth."""
    total = int(reader.fetchall("SELECT coalesce(max(seq), 0) FROM memory_entries")[0][0])  # no entry is deleted
    if total < COMMON_WORDS_FROM:
        return frozenset()
    database = str(reader.fetchall("PRAGMA database_list")[0][2])
    common = set()
    for word in words:
        known = _common.get((database, word))
        if known is None or total > known[1] * 1.1:
            half = total // 2
            count = int(reader.fetchall("SELECT count(*) FROM (SELECT 1 FROM memory_fts WHERE memory_fts MATCH ?"
                                        " LIMIT ?)", (f'"{word}"', half + 1))[0][0])
            if len(_common) >= _COMMON_CACHE_MAX:
                _common.clear()
            known = _common[(database, word)] = (count > half, total)
        if known[0]:
            common.add(word)
    return frozenset(common)


def expression(reader: Reader, match: Match) -> str:
    """The FTS5 expression of a query: a FullTextQuery without its common words, or a given expression.
    On PostgreSQL the query's tsquery, as text (store/postgres/memory_index.py)."""
    if isinstance(match, str):
        return match
    if reader.dialect == "postgres":
        return memory_index.tsquery_text(reader, match)
    return match.expression(common_words(reader, match.words))


def fulltext(reader: Reader, namespace: str, match: Match, f: MemoryFilter, limit: int) -> list[tuple[int, float, str]]:
    """(seq, bm25, snippet) of the best `limit` entries of the namespace matching the FTS5 expression
    and f, best first. bm25 is SQLite's (lower is better, negative); the snippet marks each match with [ ]."""
    text = expression(reader, match)
    rows = _ranked(reader, namespace, text, f, limit)
    return [(seq, rank, snippet) for (seq, rank), snippet in zip(rows, _snippets(reader, text, [s for s, _ in rows]))]


def ranked_matches(reader: Reader, namespace: str, match: Match, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    """fulltext() without the snippets: (seq, bm25), best first."""
    return _ranked(reader, namespace, expression(reader, match), f, limit)


def _ranked(reader: Reader, namespace: str, match: str, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    if reader.dialect == "postgres":
        return memory_index.ranked(reader, namespace, match, f, limit)
    if not match or limit <= 0:
        return []
    where, params = filter_sql(f, namespace, per_row=True)
    if f == MemoryFilter():
        # No filter but the namespace: the index ranks its best few matches alone (no row lookups), then
        # those are checked by primary key (NOT INDEXED: SQLite would otherwise walk a namespace index).
        # Enough of them pass unless other namespaces hold most matches.
        ranked = reader.fetchall(
            f"SELECT rowid, bm25(memory_fts, {_WEIGHTS}) AS rank FROM memory_fts WHERE memory_fts MATCH ?"
            " ORDER BY rank, rowid LIMIT ?", [match, limit * FIRST_LOOK])
        passing = {int(row[0]) for row in reader.fetchall(
            f"SELECT m.seq FROM memory_entries m NOT INDEXED WHERE m.seq IN ({', '.join('?' * len(ranked))})"
            f" AND {where}", [*(row[0] for row in ranked), *params])} if ranked else set()
        rows = [(int(row[0]), float(row[1])) for row in ranked if row[0] in passing]
        if len(rows) >= limit or len(ranked) < limit * FIRST_LOOK:
            return rows[:limit]
    # A filter: one pass that the full-text index drives (CROSS JOIN keeps SQLite from turning it round),
    # BM25 computed only for the matches that pass. The filter's seqs, read once from their own indexes
    # into a set (`+` keeps FTS5 from seeking each of them), cut the matches before any row lookup; the
    # survivors are checked by primary key. At 100k entries this took a task or tag filter's ranking from
    # 13–31 ms to 4–8 ms (same hits).
    narrowing = filter_set_sql(namespace, f)
    narrow, narrow_params = (f" AND +memory_fts.rowid IN ({narrowing[0]})", narrowing[1]) if narrowing else ("", [])
    return [(int(row[0]), float(row[1])) for row in reader.fetchall(
        f"SELECT memory_fts.rowid, bm25(memory_fts, {_WEIGHTS}) AS rank FROM memory_fts"
        f" CROSS JOIN memory_entries m ON m.seq = memory_fts.rowid WHERE memory_fts MATCH ?{narrow} AND {where}"
        " ORDER BY rank, memory_fts.rowid LIMIT ?", [match, *narrow_params, *params, limit])]


def _snippets(reader: Reader, match: str, seqs: list[int]) -> list[str]:
    """The snippet of each entry (by seq) for the match, in order; computed for these rows only."""
    if reader.dialect == "postgres":
        return memory_index.snippets(reader, match, seqs)
    found: dict[int, str] = {}
    for seq in seqs:
        row = reader.fetchone(f"SELECT snippet(memory_fts, -1, '[', ']', '…', {SNIPPET_TOKENS}) FROM memory_fts"
                              " WHERE memory_fts MATCH ? AND rowid = ?", (match, seq))
        found[seq] = str(row[0]) if row is not None else ""
    return [found[seq] for seq in seqs]


def semantic(reader: Reader, namespace: str, vector: np.ndarray, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    """(seq, cosine distance) of the `limit` entries of the namespace nearest to vector that match f, nearest first."""
    return memory_vectors.nearest(reader, namespace, vector, limit, f=f)


def search_hits(reader: Reader, namespace: str, match: Match, vector: np.ndarray | None, mode: SearchMode,
                f: MemoryFilter, limit: int) -> list[Hit]:
    """The best `limit` hits of the mode, best first. match is the query (core.memory_search.full_text_query)
    or an FTS5 expression; vector the query's embedding (required for SEMANTIC and HYBRID)."""
    if mode is SearchMode.FULLTEXT:
        return [Hit(seq, -bm25, fulltext_rank=rank, snippet=snippet)
                for rank, (seq, bm25, snippet) in enumerate(fulltext(reader, namespace, match, f, limit), start=1)]
    if vector is None:
        raise ValueError(f"{mode} search needs the query's embedding")
    if mode is SearchMode.SEMANTIC:
        return [Hit(seq, 1.0 - distance, semantic_rank=rank)
                for rank, (seq, distance) in enumerate(semantic(reader, namespace, vector, f, limit), start=1)]
    text, texts = fulltext_candidates(reader, namespace, match, f, limit)
    return fused_hits(reader, text, texts, semantic_candidates(reader, namespace, vector, f, limit), limit)


def fulltext_candidates(reader: Reader, namespace: str, match: Match, f: MemoryFilter,
                        limit: int) -> tuple[str, list[int]]:
    """HYBRID's full-text half for `limit` hits: the FTS5 expression that ran and its best candidates."""
    text = expression(reader, match)
    return text, [seq for seq, _ in ranked_matches(reader, namespace, text, f, candidate_count(limit))]


def semantic_candidates(reader: Reader, namespace: str, vector: np.ndarray, f: MemoryFilter, limit: int) -> list[int]:
    """HYBRID's semantic half for `limit` hits: its best candidates, pre-selected as for a SEMANTIC search
    of `limit` hits (the deeper ranks only add small fusion scores; on the evaluation's dev set sizing the
    pre-selection by the 2 × limit candidates found no more evidence and costs 60 % more)."""
    return [seq for seq, _ in memory_vectors.nearest(reader, namespace, vector, candidate_count(limit), f=f,
                                                     candidates=limit * memory_vectors.OVERSAMPLE)]


def fused_hits(reader: Reader, match: str, texts: list[int], near: list[int], limit: int) -> list[Hit]:
    """HYBRID's hits from both halves' candidates, the full-text ones with their snippets."""
    hits = reciprocal_rank_fusion([(seq, "") for seq in texts], near, limit)
    # Snippets only for the hits that made the cut (each costs a full-text lookup).
    found = [hit for hit in hits if hit.fulltext_rank]
    for hit, snippet in zip(found, _snippets(reader, match, [hit.seq for hit in found])):
        hit.snippet = snippet
    return hits


def search_entries(reader: Reader, namespace: str, match: Match, vector: np.ndarray | None, mode: SearchMode,
                   f: MemoryFilter, limit: int) -> list[tuple[Hit, MemoryEntry]]:
    """search_hits with each hit's entry (tags and relevance_to included), best first."""
    return with_entries(reader, namespace, search_hits(reader, namespace, match, vector, mode, f, limit))


def with_entries(reader: Reader, namespace: str, hits: list[Hit]) -> list[tuple[Hit, MemoryEntry]]:
    """Each hit with its entry (tags and relevance_to included), in the hits' order."""
    entries = entries_by_seq(reader, namespace, [hit.seq for hit in hits])
    return [(hit, entries[hit.seq]) for hit in hits if hit.seq in entries]
