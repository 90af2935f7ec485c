"""Searching memory entries: BM25 over the query's words with snippets, the nearest vectors, and both fused.

On SQLite the words are ranked by the in-memory index of store/memory/memory_text_index.py (Okapi BM25 with
its statistics over the entries searched); FTS5 finds the entries holding a query's phrases and marks
the snippets. On PostgreSQL the full-text and nearest-neighbour halves run on tsvector and pgvector
instead, full text scored by the same BM25 (store/postgres/memory_index.py says how, and where the
engines differ), and HYBRID fuses their scores alike.

`search_entries` runs a search in one reader-thread hop: each mode's ranked list, narrowed by the
filter, the fusion for HYBRID, and the entries of the hits. SearchMemories (memory/archive.py) runs
HYBRID's halves, `fulltext_candidates` and `semantic_candidates`, in two reader threads at once and
then `fused_hits`.
"""

from __future__ import annotations

import numpy as np

from taskmem.core.memory import MemoryEntry, MemoryFilter
from taskmem.core.memory_search import (
    ALIKE_PENALTY, ALIKE_SPAN, FullTextQuery, Hit, SearchMode, candidate_count, convex_fusion, neighbour_pairs,
    spread_over_windows,
)
from taskmem.store.memory import memory_filter_sets, memory_text_index, memory_vectors
from taskmem.store.memory.memory_entries import entries_by_seq
from taskmem.store.postgres import memory_index
from taskmem.store.access import Reader

SNIPPET_TOKENS = 16


def expression(reader: Reader, query: FullTextQuery) -> str:
    """The query as its engine matches it: the FTS5 expression, or on PostgreSQL the tsquery, as text
    (store/postgres/memory_index.py). Used for snippets (and on PostgreSQL for the ranking)."""
    if reader.dialect == "postgres":
        return memory_index.tsquery_text(reader, query)
    return query.expression()


def fulltext(reader: Reader, namespace: str, query: FullTextQuery, f: MemoryFilter,
             limit: int) -> list[tuple[int, float, str]]:
    """(seq, score, snippet) of the best `limit` entries of the namespace matching the query and f, best
    first. score: BM25 (higher is better); the snippet marks each match with [ ]."""
    text = expression(reader, query)
    rows = ranked_matches(reader, namespace, query, f, limit, text)
    return [(seq, score, snippet) for (seq, score, _), snippet in zip(rows, _snippets(reader, text, [r[0] for r in rows]))]


def ranked_matches(reader: Reader, namespace: str, query: FullTextQuery, f: MemoryFilter, limit: int,
                   text: str = "") -> list[tuple[int, float, float]]:
    """fulltext() without the snippets: (seq, score, share) best first, score being Okapi BM25 with its
    statistics over the entries searched (the namespace narrowed by f) and share the score over the most
    the query's words can score (0..1), on both engines (memory_text_index.best_by_bm25). text:
    expression(query), if already made."""
    if limit <= 0:
        return []
    words = [*query.words, *(word for phrase in query.phrases for word in phrase.split())]
    if reader.dialect == "postgres":
        return memory_index.ranked(reader, namespace, words, text or expression(reader, query),
                                   bool(query.phrases), f, limit)
    required = _holding_phrases(reader, query) if query.phrases else None
    if required is not None and not len(required):
        return []
    hits = memory_text_index.index_of(reader).ranked(
        reader, namespace, words, limit, memory_filter_sets.filter_seqs(reader, namespace, f), required)
    return [(hit.seq, hit.score, hit.share) for hit in hits]


def _holding_phrases(reader: Reader, query: FullTextQuery) -> np.ndarray:
    """Seqs of the entries holding every phrase of the query (FTS5 matches them, as written)."""
    text = reader.fetchall("SELECT group_concat(rowid) FROM memory_fts WHERE memory_fts MATCH ?",
                           [" AND ".join(f'"{phrase}"' for phrase in query.phrases)])[0][0]
    return np.fromstring(text, dtype=np.int64, sep=",") if text else np.empty(0, np.int64)


def _snippets(reader: Reader, match: str, seqs: list[int]) -> list[str]:
    """The snippet of each entry (by seq) for the match, in order; made for these rows only."""
    if reader.dialect == "postgres":
        return memory_index.snippets(reader, match, seqs)
    if not seqs:
        return []
    texts = {int(row[0]): (str(row[1]), str(row[2])) for row in reader.fetchall(
        f"SELECT seq, summary, detail FROM memory_entries WHERE seq IN ({', '.join('?' * len(seqs))})", seqs)}
    return memory_text_index.snippets([texts.get(seq, ("", "")) for seq in seqs], match, SNIPPET_TOKENS)


def semantic(reader: Reader, namespace: str, vector: np.ndarray, f: MemoryFilter, limit: int) -> list[tuple[int, float]]:
    """(seq, cosine distance) of the `limit` entries of the namespace nearest to vector that match f, nearest first."""
    return memory_vectors.nearest(reader, namespace, vector, limit, f=f)


def search_hits(reader: Reader, namespace: str, query: FullTextQuery, vector: np.ndarray | None, mode: SearchMode,
                f: MemoryFilter, limit: int) -> list[Hit]:
    """The best `limit` hits of the mode, best first. query: the search text as core.memory_search.full_text_query
    reads it; vector: the query's embedding (required for SEMANTIC and HYBRID)."""
    if mode is SearchMode.FULLTEXT:
        return [Hit(seq, score, fulltext_rank=rank, snippet=snippet)
                for rank, (seq, score, snippet) in enumerate(fulltext(reader, namespace, query, f, limit), start=1)]
    if vector is None:
        raise ValueError(f"{mode} search needs the query's embedding")
    if mode is SearchMode.SEMANTIC:
        return [Hit(seq, 1.0 - distance, semantic_rank=rank)
                for rank, (seq, distance) in enumerate(semantic(reader, namespace, vector, f, limit), start=1)]
    text, texts = fulltext_candidates(reader, namespace, query, f, limit)
    return fused_hits(reader, text, texts, semantic_candidates(reader, namespace, vector, f, limit), vector, limit)


def fulltext_candidates(reader: Reader, namespace: str, query: FullTextQuery, f: MemoryFilter,
                        limit: int) -> tuple[str, list[tuple[int, float]]]:
    """HYBRID's full-text half for `limit` hits: the query's expression (for snippets) and its best
    candidates with their share of the most the words can score."""
    text = expression(reader, query)
    return text, [(seq, share) for seq, _, share in ranked_matches(reader, namespace, query, f,
                                                                   candidate_count(limit), text)]


def semantic_candidates(reader: Reader, namespace: str, vector: np.ndarray, f: MemoryFilter,
                        limit: int) -> list[tuple[int, float]]:
    """HYBRID's semantic half for `limit` hits: its best candidates with their cosine similarity, pre-selected
    as for a SEMANTIC search of `limit` hits (the deeper ranks add little to the fusion; on the evaluation's
    dev set sizing the pre-selection by the 2 × limit candidates found no more evidence and costs 60 % more)."""
    return [(seq, 1.0 - distance) for seq, distance in memory_vectors.nearest(
        reader, namespace, vector, candidate_count(limit), f=f, candidates=limit * memory_vectors.OVERSAMPLE)]


def fused_hits(reader: Reader, match: str, texts: list[tuple[int, float]], near: list[tuple[int, float]],
               vector: np.ndarray, limit: int, spread_all: bool = False) -> list[Hit]:
    """HYBRID's hits from both halves' candidates (core.memory_search.convex_fusion, on both engines), the
    full-text ones with their snippets, chosen by core.memory_search.spread_over_windows: a hit lowers the
    neighbours in its task that repeat it (spread_all: every neighbour)."""
    nearby = {seq for seq, _ in near}
    unranked = [seq for seq, _ in texts if seq not in nearby]
    # Every candidate's cosine with the query: the fusion's semantic part, and what the spread asks of a neighbour.
    similarity = {**memory_vectors.similarities(reader, unranked, vector), **dict(near)}
    fused = convex_fusion(texts, near, similarity, len(texts) + len(near))
    task_of = _tasks_of(reader, [hit.seq for hit in fused])
    if spread_all:
        hits = spread_over_windows(fused, task_of, limit)
    else:
        alike = memory_vectors.pair_similarities(reader, neighbour_pairs(task_of, ALIKE_SPAN))
        hits = spread_over_windows(fused, task_of, limit, span=ALIKE_SPAN, penalty=ALIKE_PENALTY, alike=alike,
                                   relevance=similarity)
    # Snippets only for the hits that made the cut (each costs a full-text lookup).
    found = [hit for hit in hits if hit.fulltext_rank]
    for hit, snippet in zip(found, _snippets(reader, match, [hit.seq for hit in found])):
        hit.snippet = snippet
    return hits


def _tasks_of(reader: Reader, seqs: list[int]) -> dict[int, str]:
    if not seqs:
        return {}
    return {int(seq): str(task) for seq, task in reader.fetchall(
        f"SELECT seq, task_id FROM memory_entries WHERE seq IN ({', '.join('?' * len(seqs))})", seqs)}


def search_entries(reader: Reader, namespace: str, query: FullTextQuery, vector: np.ndarray | None,
                   mode: SearchMode, f: MemoryFilter, limit: int) -> list[tuple[Hit, MemoryEntry]]:
    """search_hits with each hit's entry (tags and relevance_to included), best first."""
    return with_entries(reader, namespace, search_hits(reader, namespace, query, vector, mode, f, limit))


def with_entries(reader: Reader, namespace: str, hits: list[Hit]) -> list[tuple[Hit, MemoryEntry]]:
    """Each hit with its entry (tags and relevance_to included), in the hits' order."""
    entries = entries_by_seq(reader, namespace, [hit.seq for hit in hits])
    return [(hit, entries[hit.seq]) for hit in hits if hit.seq in entries]
