"""Memory search on PostgreSQL: tsvector full text (GIN) and pgvector nearest neighbours (HNSW).

The same contract as the SQLite engine's text and vector index functions (store/memory/memory_search.py and
store/memory/memory_vectors.py dispatch here by the reader's dialect), with these differences:
- A full-text query is the same FullTextQuery (required phrases AND any of the words), built as a
  tsquery of the 'english' configuration (Snowball stemming, where FTS5 uses Porter; its stop words
  drop out of the query). Its text form is the opaque "expression" HYBRID passes between its halves.
- Scores: the same Okapi BM25 as SQLite's (`ranked`; one scorer, memory_text_index.best_by_bm25), a
  summary occurrence counting twice a detail one, its statistics (entry count, each term's document
  frequency, average length) computed at query time over the entries searched, from the database
  alone: no state in a process, so replicas writing the same database rank alike. An entry's length is
  its word count, stop words included, as SQLite counts it (search_length, migration 0005). HYBRID's
  share is the same (the score over the most the query's words can score), so HYBRID fuses as on
  SQLite; on the dev set of bench/memory_eval.py both engines score the same recall for each mode.
  The terms differ a little: the 'english' configuration stems and drops its stop words (from the
  entries and the query: such a word neither matches nor counts in the share), where FTS5 stems by
  Porter and keeps every word; a hyphenated word is also a term of its own here ('e-mail' beside 'e'
  and 'mail'), on SQLite only its parts.
  Cost: a term's weighted frequency is read from each candidate's tsvector, so a search costs in
  proportion to the entries holding any of its words, as ts_rank's did, plus counting the entries
  searched. At 100k entries (bench/memory_bench.py's corpus and queries, interleaved with ts_rank's
  query on one database, 2 shared cores) the ranking took p50 35 ms against ts_rank's 17 unfiltered
  (a word in 60k entries: ~140-220 ms against ~110), 13 against 4.5 within a task, and 49 against 14
  with a tag filter, whose count of the entries searched then joined the tag's rows to a scan of the
  whole table (~30-45 ms); since migration 0006 that count is an index-only merge join of the tag's rows
  with memory_entries_lengths_by_seq (~11 ms; tag-filtered FULLTEXT p50 35 ms against 63, HYBRID 39
  against 71, A/B interleaved on one busy database).
  Since migration 0013 only a search narrowed by other filters than a task or tags still scans: the
  others rank from postings (store/postgres/memory_postings.py) with the same hits and scores, at 100k
  entries HYBRID p95 111-131 ms unfiltered against the scan's 376-697; since the expired-entry check
  every search runs first stays on its index once prepared (`_expired_pending`) and migration 0017, 15-16
  unfiltered, 8-10 within a task and 23-31 with a tag (docs/scaling.md has the figures). A tag's search read
  every posting of its terms in the namespace and kept its entries' (63k rows for 6k); since migration 0024 it
  reads the tag's own postings (memory_tag_postings): tag-filtered FULLTEXT p95 24-41 ms -> 10-12, HYBRID
  33-49 -> 17-25 (bench/memory_bench.py --postgres at 100k, quiet), at the cost of a copy of a tagged
  entry's postings per tag (a write of 100 entries with 0-2 tags each: 329 -> 408 ms median).
- Snippets: ts_headline marks each match with [ ] in one fragment of at most 16 words, as FTS5's
  snippet() does with 16 tokens (fragments are joined with …).
- Vectors are exact float32 pgvector values; the nearest are found by cosine distance through an
  HNSW index with iterative scans (connection.configure: without them a filter met only the walk's first
  40 candidates, and a search within a task crowded out by others found none) and returned in exact order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from taskmem.core.errors import InvalidArgument
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter
from taskmem.core.memory_search import FullTextQuery
from taskmem.store.memory import memory_text_index
from taskmem.store.memory.memory_filter_sql import filter_sql
from taskmem.store.memory.reembed_staging import ReembedStaging
from taskmem.store.postgres import memory_postings
from taskmem.store.access import Reader, Transaction

if TYPE_CHECKING:
    import psycopg

_CONFIG = "'english'"
_WEIGHTS = "'{0, 0, 0.5, 1.0}'"  # D, C, B (detail), A (summary)
_HEADLINE = "'StartSel=[, StopSel=], MaxWords=16, MinWords=6, ShortWord=0, MaxFragments=1, FragmentDelimiter=…'"
HNSW_INDEX = "memory_embeddings_hnsw"
_ADJACENT_MARKS = re.compile(r"\] \[")
_COMMA = "','"


def tsquery_text(reader: Reader, query: FullTextQuery, leave_out: frozenset[str] = frozenset()) -> str:
    """The tsquery of a FullTextQuery, as text: every phrase, AND any of the phrases and words."""
    words = [w for w in query.words if w not in leave_out] or list(query.words)
    phrases = [f"phraseto_tsquery({_CONFIG}, ?)" for _ in query.phrases]
    alternatives = [*phrases, *(f"plainto_tsquery({_CONFIG}, ?)" for _ in words)]
    if not alternatives:
        return ""
    anyof = "(" + " || ".join(alternatives) + ")"
    expression = " && ".join([*phrases, anyof]) if phrases else anyof
    row = reader.fetchone(f"SELECT ({expression})::text", [*query.phrases, *query.phrases, *words])
    return str(row[0]) if row is not None and row[0] else ""


def ranked(reader: Reader, namespace: str, words: Sequence[str], tsquery: str, phrased: bool, f: MemoryFilter,
           limit: int) -> list[tuple[int, float, float]]:
    """(seq, BM25 score, share) of the best `limit` entries matching the tsquery, best first: SQLite's Okapi
    BM25 (store/memory/memory_text_index.best_by_bm25, the same scorer) over the terms of the words (the query's
    words and its phrases' words), its statistics taken over the entries searched (the namespace narrowed by
    f) at query time from the database alone, so every replica ranks alike.

    The entries searched are counted and their lengths summed (search_length, read index-only: from
    memory_entries_lengths when not narrowed, from memory_entries_lengths_by_seq merge-joined in seq order
    with the primary key of a tag or relevance_to filter's rows). The candidates are those holding any of the terms (the
    GIN index finds them), each read with its length and each term's weighted frequency, a summary
    occurrence (weight A) counting 2 and a detail one (B) 1: for one term, ts_rank_cd with no
    normalisation is the sum of its occurrences' weights, so twice its value under weights {0, 0, 0.5, 1}.
    A term's document frequency is how many candidates hold it. Only those matching the tsquery (its
    phrases, if phrased) may be hits."""
    if not tsquery or limit <= 0:
        return []
    row = reader.fetchone(f"SELECT ARRAY(SELECT DISTINCT unnest(tsvector_to_array(to_tsvector({_CONFIG}, w)))"
                          f" FROM unnest(CAST(? AS text[])) AS w)", [list(words)])
    lexemes = sorted(row[0]) if row is not None and row[0] else []
    terms = [_quoted(term) for term in lexemes]
    if not terms:
        return []
    # The postings know nothing of expiry: they rank only while the namespace holds no entry expired and not yet
    # deleted (the usual case between sweeps; the partial index on expires_at answers at once).
    if not _expired_pending(reader, namespace):
        if not phrased and f == MemoryFilter():
            best = memory_postings.ranked(reader, namespace, lexemes, limit)
            if best is not None:
                return best
        if memory_postings.narrowed_by_postings(f):
            return memory_postings.ranked_narrowed(reader, namespace, lexemes, f, limit, tsquery if phrased else "")
    # The statistics count expired entries until maintenance deletes them (a skew of one sweep's worth), so
    # they stay index-only reads; the candidates below leave them out.
    scope_where, scope_params = filter_sql(f, namespace, with_expired=True)
    scope = reader.fetchone(f"SELECT count(*), coalesce(sum(m.search_length), 0) FROM memory_entries m"
                            f" WHERE {scope_where}", scope_params)
    searched, total_length = (int(scope[0]), int(scope[1])) if scope is not None else (0, 0)
    if not searched:
        return []
    where, params = filter_sql(f, namespace)
    anyof = " | ".join(terms)
    columns = ["m.seq", "m.search_length",
               *(["(m.search @@ CAST(? AS tsquery))::int"] if phrased else []),
               *(f"(2 * ts_rank_cd({_WEIGHTS}, m.search, CAST(? AS tsquery), 0))::int" for _ in terms)]
    found = reader.fetchone(  # one row of comma-separated columns: ~3× faster to read than a row per candidate
        f"SELECT {', '.join(f'string_agg(({c})::text, {_COMMA})' for c in columns)}"
        f" FROM memory_entries m WHERE m.search @@ CAST(? AS tsquery) AND {where}",
        [*([tsquery] if phrased else []), *terms, anyof, *params])
    if found is None or found[0] is None:
        return []
    seqs, lengths, *rest = [np.fromstring(str(text), dtype=np.int64, sep=",") for text in found]
    order = np.argsort(seqs)  # rows in seq order: ties go to the lower seq, as on SQLite
    seqs, lengths = seqs[order], lengths[order]
    hits = rest.pop(0)[order].astype(bool) if phrased else None
    postings = []
    for frequencies in rest:
        holding = np.flatnonzero(frequencies[order])
        postings.append((holding, frequencies[order][holding].astype(np.float32)))
    best = memory_text_index.best_by_bm25(searched, total_length / searched, lengths, postings, limit, hits)
    return [(int(seqs[i]), score, share) for i, score, share in best]


def _expired_pending(reader: Reader, namespace: str) -> bool:
    """Whether the namespace holds an entry that has expired and is not deleted yet.

    ORDER BY expires_at keeps it on the partial index memory_entries_expiring once psycopg prepares the
    statement (its 6th run on a connection): the generic plan of a bare LIMIT 1 guesses a third of the rows
    match `expires_at <= $1` and scans the table for the first, reading all of it when none has expired
    (40-50 ms at 100k entries, most of every search's time)."""
    return reader.fetchone("SELECT 1 FROM memory_entries WHERE expires_at <= ? AND namespace = ?"
                           " ORDER BY expires_at LIMIT 1", [now_us(), namespace]) is not None


def _quoted(lexeme: str) -> str:
    """A lexeme as a tsquery of it alone (quoted: any character may be in a lexeme)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def snippets(reader: Reader, tsquery: str, seqs: Sequence[int]) -> list[str]:
    """The snippet of each entry (by seq) for the query, in order."""
    if not seqs or not tsquery:
        return ["" for _ in seqs]
    rows = reader.fetchall(
        f"SELECT seq, ts_headline({_CONFIG}, summary || ' ' || detail, CAST(? AS tsquery), {_HEADLINE})"
        f" FROM memory_entries WHERE seq IN ({', '.join('?' * len(seqs))})", [tsquery, *seqs])
    # ts_headline marks each word ("[climbing] [gym]"); FTS5 marks a matched phrase as one ("[climbing gym]")
    # and separate words separately, so marks are joined only for a query holding a phrase (<->).
    joined = "<->" in tsquery
    found = {int(row[0]): _ADJACENT_MARKS.sub(" ", str(row[1])) if joined else str(row[1]) for row in rows}
    return [found.get(seq, "") for seq in seqs]


def _vector_text(vector: np.ndarray) -> str:
    return "[" + ",".join(repr(float(x)) for x in vector) + "]"


def prepare_index(tx: Transaction, dimension: int) -> None:
    """The HNSW index for the recorded dimension (an index needs a fixed one; a migration cannot know it)."""
    tx.execute(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON memory_embeddings"
               f" USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops)")


def drop_index(tx: Transaction) -> None:
    tx.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")


def insert_vectors(tx: Transaction, seqs: Sequence[int], matrix: np.ndarray) -> None:
    tx.executemany("INSERT INTO memory_embeddings (seq, embedding) VALUES (?, CAST(? AS vector))",
                   [(seq, _vector_text(matrix[i])) for i, seq in enumerate(seqs)])


def nearest(reader: Reader, namespace: str, vector: np.ndarray, k: int, dimension: int,
            f: MemoryFilter) -> list[tuple[int, float]]:
    """(seq, cosine distance) of the k entries of the namespace nearest to vector that match f, nearest first."""
    if len(vector) != dimension:
        raise InvalidArgument("vector", f"has {len(vector)} dimensions; the index holds {dimension}")
    where, params = filter_sql(f, namespace, per_row=True)
    cast = f"vector({int(dimension)})"
    rows = reader.fetchall(
        f"SELECT e.seq, (e.embedding::{cast}) <=> CAST(? AS {cast}) AS distance"
        f" FROM memory_embeddings e JOIN memory_entries m ON m.seq = e.seq WHERE {where}"
        f" ORDER BY (e.embedding::{cast}) <=> CAST(? AS {cast}) LIMIT ?",
        [_vector_text(vector), *params, _vector_text(vector), k])
    found = [(int(row[0]), float(row[1])) for row in rows]
    return sorted(found, key=lambda hit: (hit[1], hit[0]))


def similarities(reader: Reader, seqs: Sequence[int], vector: np.ndarray) -> dict[int, float]:
    """The cosine similarity of each of these entries' vectors to the query vector (of the recorded model's
    dimension, as `nearest` checked for the same search); entries not embedded yet are left out. A lookup by
    seq, so no cast to the dimension the HNSW index needs."""
    if not seqs:
        return {}
    rows = reader.fetchall(
        f"SELECT seq, 1 - (embedding <=> CAST(? AS vector)) FROM memory_embeddings"
        f" WHERE seq IN ({', '.join('?' * len(seqs))})", [_vector_text(vector), *seqs])
    return {int(row[0]): float(row[1]) for row in rows}


def pair_similarities(reader: Reader, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """memory_vectors.pair_similarities on PostgreSQL: the cosine of each pair's vectors, computed here."""
    if not pairs:
        return {}
    values = ", ".join("(?::bigint, ?::bigint)" for _ in pairs)
    rows = reader.fetchall(
        f"SELECT p.a, p.b, 1 - (x.embedding <=> y.embedding) FROM (VALUES {values}) AS p (a, b)"
        f" JOIN memory_embeddings x ON x.seq = p.a JOIN memory_embeddings y ON y.seq = p.b",
        [seq for pair in pairs for seq in pair])
    return {(int(row[0]), int(row[1])): float(row[2]) for row in rows}


def rebuild(connection: psycopg.Connection[Any], model: str, dimension: int,
            embed: Callable[[list[str]], np.ndarray], progress: Callable[[int, int], None], batch: int = 256) -> int:
    """`taskmem reembed` on PostgreSQL (memory_vectors.rebuild is SQLite's): embed every memory summary with
    (model, dimension) and make those the vectors, emptying the embedding backlog; returns the count.

    The batches are embedded outside any transaction into a TEMP table of this (autocommit) connection, so
    the replicas keep writing meanwhile. The swap is one transaction that first locks memory_entries in
    SHARE mode (writers of entries wait; readers do not), embeds what was written since, replaces the
    vectors (searches wait for it) and records the model; the HNSW index for the new dimension is built
    after it. An interrupted rebuild leaves the old vectors and model in place."""
    connection.execute("DROP TABLE IF EXISTS pg_temp.reembed_vectors")
    connection.execute("CREATE TEMP TABLE reembed_vectors (seq BIGINT PRIMARY KEY, embedding vector NOT NULL)")
    row = connection.execute("SELECT count(*) FROM memory_entries").fetchone()

    def summaries_after(last: int, limit: int | None) -> list[tuple[Any, ...]]:
        return connection.execute("SELECT seq, summary FROM memory_entries WHERE seq > %s ORDER BY seq"
                                  + (" LIMIT %s" if limit else ""), (last, limit) if limit else (last,)).fetchall()

    def stage_vectors(vectors: list[tuple[int, np.ndarray]]) -> None:
        with connection.cursor() as cursor:
            cursor.executemany("INSERT INTO reembed_vectors (seq, embedding) VALUES (%s, CAST(%s AS vector))",
                               [(seq, _vector_text(vector)) for seq, vector in vectors])

    staging = ReembedStaging(summaries_after, stage_vectors, embed, model, dimension, progress,
                             int(row[0]) if row else 0)
    staging.stage_all(batch)
    try:
        with connection.transaction():
            connection.execute("LOCK TABLE memory_entries IN SHARE MODE")
            staging.stage(None)  # entries written while the batches ran
            connection.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
            # TRUNCATE, not DELETE: the old vectors' dead rows would stay visible to the index build, whose
            # expression casts every row to the new dimension and fails on them.
            connection.execute("TRUNCATE memory_embeddings")
            connection.execute("INSERT INTO memory_embeddings (seq, embedding) SELECT seq, embedding FROM reembed_vectors")
            connection.execute("DELETE FROM memory_embedding_queue")  # every entry has its vector now
            connection.execute("DELETE FROM memory_embedding_model")
            connection.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at)"
                               " VALUES (1, %s, %s, %s)", (model, dimension, now_us()))
    finally:
        connection.execute("DROP TABLE IF EXISTS pg_temp.reembed_vectors")
    # After the swap, so searches wait only for the swap (they scan exactly until the index is built; a
    # server starting meanwhile builds it too: CREATE INDEX IF NOT EXISTS).
    connection.execute(f"CREATE INDEX IF NOT EXISTS {HNSW_INDEX} ON memory_embeddings"
                       f" USING hnsw ((embedding::vector({int(dimension)})) vector_cosine_ops)")
    return staging.done
