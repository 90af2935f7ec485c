"""BM25's top entries from the postings of migration 0013, reading the common words' postings only for the
entries the rarer words found (MaxScore): the full-text ranking of an unfiltered search on PostgreSQL.

A term t adds at most idf(t) × (K1 + 1) to an entry's score (its frequency part tf / (tf + K) is below 1).
The terms are read rarest first, each term's postings whole, scoring the entries found so far; once the
terms still unread could together add no more than the `limit`-th best score found (a lower bound of the
true `limit`-th best), no entry holding only unread terms can reach the top, so the unread terms' postings
are looked up for the entries found alone, and those entries are scored exactly, by the same scorer and
statistics as memory_index.ranked's scan of every entry holding a word (memory_text_index.best_by_bm25):
the same hits, scores and order. Its statistics come from memory_term_counts and memory_search_totals,
kept exact by the writes.

A search within a task, or narrowed to any of some tags (`ranked_narrowed`), reads the postings of its
words among the entries searched whole: in proportion to those entries holding them, as the scan, but
index-only where the scan read each entry's tsvector (at 100k entries, a tag's 10k entries and a
three-word query: 15 ms against the scan's 230-310), the entries searched counted from the tags' own rows
(migration 0017). Other filters keep memory_index.ranked's scan: the
namespace's postings of a word semi-joined with an arbitrary filter's entries cost in proportion to the
namespace's entries holding it (within a task: p50 45-56 ms against the scan's 25-34 before the task's
own postings index), reading words held by most entries whole for nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from taskmem.core.memory import MemoryFilter
from taskmem.store.access import Reader
from taskmem.store.memory import memory_text_index
from taskmem.store.memory.memory_filter_sql import filter_sql
from taskmem.store.memory.memory_text_index import B, K1


# A term's postings as comma-separated columns in seq order (~3× faster to read than a row per posting).
_AGGREGATES = ("string_agg(p.seq::text, ',' ORDER BY p.seq), string_agg(p.frequency::text, ',' ORDER BY p.seq),"
               " string_agg(p.length::text, ',' ORDER BY p.seq)")


def ranked(reader: Reader, namespace: str, terms: Sequence[str],
           limit: int) -> list[tuple[int, float, float]] | None:
    """(seq, BM25 score, share) of the best `limit` entries of the namespace holding any of the terms
    (lexemes), best first, as memory_index.ranked finds them unfiltered; None when fewer than `limit`
    entries hold a word of positive weight (the scan then ranks those holding only words of no weight)."""
    totals = reader.fetchone("SELECT entries, total_length FROM memory_search_totals WHERE namespace = ?",
                             [namespace])
    searched, total_length = (int(totals[0]), int(totals[1])) if totals is not None else (0, 0)
    if not searched:
        return []
    counts = {str(term): int(entries) for term, entries in reader.fetchall(
        "SELECT term, entries FROM memory_term_counts WHERE namespace = ? AND term = ANY(CAST(? AS text[]))",
        [namespace, list(terms)])}
    holding = [counts.get(term, 0) for term in terms]
    idfs = [memory_text_index.bm25_idf(searched, n) for n in holding]
    average = total_length / searched
    # Terms of positive weight, rarest (most weight) first; the others score nothing unless too few match.
    weighted = sorted((n for n in range(len(terms)) if holding[n] and idfs[n] > 0), key=lambda n: -idfs[n])
    read: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}  # term → (seqs, frequencies, lengths)
    unread_most = 0.0
    for position, term in enumerate(weighted):
        read[term] = _postings(reader, namespace, terms[term])
        unread_most = sum(idfs[n] for n in weighted[position + 1:]) * (K1 + 1)
        found, partial = _partial_scores(read, idfs, average)
        if len(found) >= limit and unread_most <= _kth(partial, limit):
            break
    if not read or len(found) < limit:
        return None
    # An entry whose score so far plus the most the unread terms could add stays below the `limit`-th best
    # score so far cannot make the top: only the others are looked up and scored.
    kth = _kth(partial, limit)
    kept = (partial >= kth) | (partial + unread_most > kth)
    found = found[kept]
    lengths = np.zeros(len(found), dtype=np.int64)
    for seqs, _, term_lengths in read.values():
        inside = np.isin(seqs, found, assume_unique=True)
        lengths[np.searchsorted(found, seqs[inside])] = term_lengths[inside]
    # Words of no weight score nothing here (best_by_bm25 weighs them only when fewer than `limit` match).
    looked_up = _looked_up(reader, namespace, [terms[n] for n in weighted if n not in read], found)
    postings = []
    for n, term in enumerate(terms):
        seqs, frequencies = read[n][:2] if n in read else looked_up.get(term, (np.empty(0, np.int64),) * 2)
        inside = np.isin(seqs, found, assume_unique=True)
        postings.append((np.searchsorted(found, seqs[inside]), frequencies[inside].astype(np.float32)))
    best = memory_text_index.best_by_bm25(searched, total_length / searched, lengths, postings, limit,
                                          holding=holding)
    return [(int(found[row]), score, share) for row, score, share in best]


def narrowed_by_postings(f: MemoryFilter) -> bool:
    """Whether `ranked_narrowed` ranks searches narrowed by f: to a task (and maybe more), or to any of some tags."""
    return bool(f.task_id) or (bool(f.tags) and f == MemoryFilter(tags=f.tags))


def ranked_narrowed(reader: Reader, namespace: str, terms: Sequence[str], f: MemoryFilter, limit: int,
                    phrases: str = "") -> list[tuple[int, float, float]]:
    """(seq, BM25 score, share) of the best `limit` entries matching f (narrowed_by_postings) holding any of the
    terms, best first, as memory_index.ranked's scan finds them: the postings of the terms among the entries
    searched are read whole, index-only (a task's from memory_postings_by_task, kept for the entries f
    matches when it narrows more than the task; or the tags' own, memory_tag_postings), and scored over
    the entries f matches, a term's document frequency being how many of them hold it. phrases: a tsquery
    the hits must match, or ""."""
    if f.task_id:
        where, params = filter_sql(f, namespace)
        # No entry has expired unswept (memory_index.ranked checked), as the postings assume: counted with the
        # expired, a task's entries are an index-only range of memory_entries_lengths_by_task (migration 0017).
        scope_where, scope_params = filter_sql(f, namespace, with_expired=True)
        scope = (f"SELECT count(*), coalesce(sum(m.search_length), 0) FROM memory_entries m WHERE {scope_where}",
                 scope_params)
        source, source_params = "memory_postings p", []
        narrowing, narrowing_params = "p.task_id = ?", [f.task_id]
        if f != MemoryFilter(task_id=f.task_id):
            narrowing += f" AND p.seq IN (SELECT m.seq FROM memory_entries m WHERE {where})"
            narrowing_params += params
    else:
        tags = ", ".join("?" * len(f.tags))
        # The tags' rows carry their entries' namespace and length (migration 0017): counted index-only, an
        # entry carrying several of the tags once.
        carrying = f"SELECT {'DISTINCT ' if len(f.tags) > 1 else ''}entry_seq, search_length FROM memory_entry_tags" \
                   f" WHERE namespace = ? AND tag IN ({tags})"
        scope = (f"SELECT count(*), coalesce(sum(t.search_length), 0) FROM ({carrying}) t", [namespace, *f.tags])
        # Each tag's own postings (migration 0024), an entry carrying several of the tags once.
        source = (f"(SELECT {'DISTINCT ' if len(f.tags) > 1 else ''}namespace, term, seq, frequency, length"
                  f" FROM memory_tag_postings WHERE tag IN ({tags})) p")
        source_params, narrowing, narrowing_params = list(f.tags), "TRUE", []
    totals = reader.fetchone(*scope)
    searched, total_length = (int(totals[0]), int(totals[1])) if totals is not None else (0, 0)
    if not searched:
        return []
    read = {str(row[0]): tuple(np.fromstring(str(text), dtype=np.int64, sep=",") for text in row[1:])
            for row in reader.fetchall(
                f"SELECT p.term, {_AGGREGATES} FROM {source} WHERE p.namespace = ?"
                f" AND p.term = ANY(CAST(? AS text[])) AND {narrowing} GROUP BY p.term",
                [*source_params, namespace, list(terms), *narrowing_params])}
    if not read:
        return []
    found = np.unique(np.concatenate([seqs for seqs, _, _ in read.values()]))
    lengths = np.zeros(len(found), dtype=np.int64)
    for seqs, _, term_lengths in read.values():
        lengths[np.searchsorted(found, seqs)] = term_lengths
    postings = []
    for term in terms:
        seqs, frequencies, _ = read.get(term, (np.empty(0, np.int64),) * 3)
        postings.append((np.searchsorted(found, seqs), frequencies.astype(np.float32)))
    required = None
    if phrases:
        row = reader.fetchone("SELECT string_agg(seq::text, ',') FROM memory_entries"
                              " WHERE seq = ANY(CAST(? AS bigint[])) AND search @@ CAST(? AS tsquery)",
                              [found.tolist(), phrases])
        holding = np.fromstring(str(row[0]), dtype=np.int64, sep=",") if row is not None and row[0] else []
        required = np.isin(found, holding)
    best = memory_text_index.best_by_bm25(searched, total_length / searched, lengths, postings, limit, required)
    return [(int(found[row]), score, share) for row, score, share in best]


def _postings(reader: Reader, namespace: str, term: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seqs, weighted frequencies, entry lengths) of every entry of the namespace holding the term, in seq
    order: one row of comma-separated columns (~3× faster to read than a row per posting)."""
    row = reader.fetchone("SELECT string_agg(seq::text, ','), string_agg(frequency::text, ','),"
                          " string_agg(length::text, ',') FROM (SELECT seq, frequency, length FROM memory_postings"
                          " WHERE namespace = ? AND term = ? ORDER BY seq) p", [namespace, term])
    if row is None or row[0] is None:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    seqs, frequencies, lengths = (np.fromstring(str(text), dtype=np.int64, sep=",") for text in row)
    return seqs, frequencies, lengths


def _looked_up(reader: Reader, namespace: str, terms: Sequence[str],
               seqs: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """term → (seqs, weighted frequencies) of those of these entries holding it, in seq order."""
    if not terms:
        return {}
    rows = reader.fetchall(
        "SELECT term, string_agg(seq::text, ',' ORDER BY seq), string_agg(frequency::text, ',' ORDER BY seq)"
        " FROM memory_postings WHERE namespace = ? AND term = ANY(CAST(? AS text[]))"
        " AND seq = ANY(CAST(? AS bigint[])) GROUP BY term", [namespace, list(terms), seqs.tolist()])
    return {str(term): (np.fromstring(str(found), dtype=np.int64, sep=","),
                        np.fromstring(str(frequencies), dtype=np.int64, sep=","))
            for term, found, frequencies in rows}


def _partial_scores(read: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]], idfs: Sequence[float],
                    average: float) -> tuple[np.ndarray, np.ndarray]:
    """(seqs, scores) of the entries holding any of the read terms, in seq order, scored over those terms
    alone: no entry's full score is below it."""
    found = np.unique(np.concatenate([seqs for seqs, _, _ in read.values()]))
    scores = np.zeros(len(found), dtype=np.float64)
    for term, (seqs, frequencies, lengths) in read.items():
        tf = frequencies.astype(np.float64)
        scores[np.searchsorted(found, seqs)] += idfs[term] * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths / average))
    return found, scores


def _kth(scores: np.ndarray, limit: int) -> float:
    """The `limit`-th best of the scores (0 with fewer)."""
    return float(np.partition(scores, len(scores) - limit)[len(scores) - limit]) if len(scores) >= limit else 0.0
