"""The vector index of memory summaries, and the model its vectors come from.

(This is the SQLite engine's index; on PostgreSQL memory_embeddings holds pgvector values with an
HNSW index, store/postgres/memory_index.py, and the functions here hand over to it.)

Two tables hold the vectors of the model recorded in memory_embedding_model:
- memory_embeddings (migration 0006): seq → the exact float32 vector, L2-normalised.
- memory_vectors: a sqlite-vec vec0 table of the same vectors quantised to one bit per
  dimension, `namespace` its partition key, type and created_at integer metadata columns.
  Created here (a migration cannot know the dimension) and rebuilt from memory_embeddings
  whenever its layout changes.

A search is a vec0 KNN, `embedding MATCH vec_quantize_binary(?) AND k = ? AND namespace = ?` plus
the filter's constraints: the partition key keeps it inside the caller's namespace (no other
namespace's rows are read) and every filter is applied during the search, not after it. It finds
OVERSAMPLE × k candidates (at least MIN_CANDIDATES) by Hamming distance, which are then rescored
exactly by cosine against their float vectors. Why bits: on 100k 384-d vectors in one partition a
float32 cosine KNN took 45–60 ms on these 2 cores, a bit KNN for 40–60 candidates 5–9 ms.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

import numpy as np
import sqlean as sqlite3

from taskmem.core.errors import InvalidArgument
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.providers.embeddings import Embedder
from taskmem.store.postgres import memory_index
from taskmem.store.storage import Reader, Transaction

log = logging.getLogger(__name__)

VECTOR_TABLE = "memory_vectors"
VEC0_MAX_K = 4096  # sqlite-vec's limit on k
# Bit-KNN candidates per wanted neighbour, rescored by cosine; at least MIN_CANDIDATES of them. Measured
# with bench/memory_eval.py --preselect (dev set: searches within ~480-turn conversations, limit 10):
# 3/40 found 83 % of the exact cosine top 10 and lost 4.3 % recall@10 to an exact scan; 6/80 96 %;
# 8/100 98.6 % and the exact scan's recall.
OVERSAMPLE = 8
MIN_CANDIDATES = 100


class EmbeddingModelMismatch(Exception):
    """The database holds vectors of another model than the configured one."""


def recorded_model(db: Reader) -> tuple[str, int] | None:
    """(model name, dimension) the stored vectors were made with, or None before any model was used."""
    row = db.fetchone("SELECT model, dimension FROM memory_embedding_model WHERE id = 1")
    return None if row is None else (str(row[0]), int(row[1]))


def mismatch_message(recorded: tuple[str, int], model: str, dimension: int) -> str:
    return (f"embedding model: the database holds vectors of {recorded[0]} ({recorded[1]} dimensions) but the"
            f" server is configured for {model} ({dimension} dimensions). Run `taskmem reembed` with the new"
            " embedding settings (and the same --database) to rebuild every vector, or configure"
            f" {recorded[0]} again")


def _table_sql(dimension: int) -> str:
    return (f"CREATE VIRTUAL TABLE {VECTOR_TABLE} USING vec0("
            "seq INTEGER PRIMARY KEY, namespace TEXT PARTITION KEY, type INTEGER, created_at INTEGER,"
            f" embedding BIT[{int(dimension)}])")


# Entry types as small integers in the index: vec0 compares integer metadata far faster than text.
_TYPE_CODES = {t.value: code for code, t in enumerate(MemoryType, start=1)}
_TYPE_CODE_SQL = "CASE m.type " + " ".join(f"WHEN '{v}' THEN {c}" for v, c in _TYPE_CODES.items()) + " ELSE 0 END"


def _index_rows_sql() -> str:
    """Index rows for memory_embeddings rows, their namespace, type and time read from memory_entries."""
    return (f"INSERT INTO {VECTOR_TABLE} (seq, namespace, type, created_at, embedding)"
            f" SELECT m.seq, m.namespace, {_TYPE_CODE_SQL}, m.created_at, vec_quantize_binary(e.embedding)"
            " FROM memory_embeddings e JOIN memory_entries m ON m.seq = e.seq")


def _ensure_index(connection: sqlite3.Connection, dimension: int) -> None:
    """Create memory_vectors for the dimension, rebuilding it from memory_embeddings when its layout is
    not the current one (the first layout held float vectors only in vec0: they are kept first)."""
    row = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)).fetchone()
    wanted = _table_sql(dimension)
    if row is not None and row[0] == wanted:
        return
    if row is not None:
        if "FLOAT[" in str(row[0]).upper():
            connection.execute(f"INSERT OR IGNORE INTO memory_embeddings (seq, embedding)"
                               f" SELECT seq, embedding FROM {VECTOR_TABLE}")
        connection.execute(f"DROP TABLE {VECTOR_TABLE}")
        log.info("rebuilding the memory vector index (layout changed)")
    connection.execute(wanted)
    connection.execute(_index_rows_sql())


def prepare_index(tx: Transaction, model: str, dimension: int) -> int:
    """At start-up, as a writer mutation: record the model on first use and create the vector index,
    or refuse another model (EmbeddingModelMismatch naming `taskmem reembed`). Returns how many entries
    wait in the embedding backlog (the background pass embeds them after start-up)."""
    recorded = recorded_model(tx)
    if recorded is not None and recorded != (model, dimension):
        raise EmbeddingModelMismatch(mismatch_message(recorded, model, dimension))
    if recorded is None:
        tx.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at) VALUES (1, ?, ?, ?)",
                   (model, dimension, tx.now))
    if tx.dialect == "postgres":
        memory_index.prepare_index(tx, dimension)
    else:
        _ensure_index(tx.statements.connection, dimension)  # type: ignore[attr-defined]  # vec0: SQLite's own
    return missing_vectors(tx)


def missing_vectors(db: Reader) -> int:
    """How many memory entries wait in the embedding backlog (have no vector yet)."""
    row = db.fetchone("SELECT count(*) FROM memory_embedding_queue")
    return int(row[0]) if row is not None else 0


def insert_vectors(tx: Transaction, rows: Sequence[tuple[int, str]], vectors: np.ndarray) -> None:
    """Vectors of entries (seq, task_id) just written in tx; their dimension must be the recorded one."""
    recorded = recorded_model(tx)
    if recorded is None:
        raise InvalidArgument("vectors", "no embedding model is recorded in this database")
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != recorded[1] or len(matrix) != len(rows):
        raise InvalidArgument("vectors", f"have shape {matrix.shape}; expected ({len(rows)}, {recorded[1]})")
    if tx.dialect == "postgres":
        memory_index.insert_vectors(tx, [seq for seq, _ in rows], matrix)
        return
    blobs = [(seq, matrix[i].tobytes()) for i, (seq, _) in enumerate(rows)]
    tx.executemany("INSERT INTO memory_embeddings (seq, embedding) VALUES (?, ?)", blobs)
    tx.executemany(_index_rows_sql() + " WHERE e.seq = ?", [(seq,) for seq, _ in blobs])


def _knn_filter(f: MemoryFilter) -> tuple[str, list[object]]:
    """f as constraints the vec0 KNN applies while it searches (so k matching rows come back): types and
    time range on the integer metadata columns; task, subtask, tags and relevance_to as one `seq IN (…)`
    set, which vec0 consumes (it costs in proportion to the set: a task of 1,000 entries adds a few ms)."""
    clauses: list[str] = []
    params: list[object] = []
    if f.types:
        clauses.append(f"type IN ({', '.join('?' * len(f.types))})")
        params.extend(_TYPE_CODES[t.value] for t in f.types)
    if f.created_after is not None:
        clauses.append("created_at >= ?")
        params.append(f.created_after)
    if f.created_before is not None:
        clauses.append("created_at < ?")
        params.append(f.created_before)
    sets: list[str] = []
    if f.task_id or f.subtask_id:
        # The namespace is in the set's query too: memory_entries' indexes lead with it.
        task = " AND task_id = ?" if f.task_id else ""
        subtask = " AND subtask_id = ?" if f.subtask_id else ""
        sets.append(f"SELECT seq FROM memory_entries WHERE namespace = ?{task}{subtask}")
    if f.tags:
        marks = ", ".join("?" * len(f.tags))
        having = f" GROUP BY entry_seq HAVING count(*) = {len(f.tags)}" if f.match_all_tags else ""
        sets.append(f"SELECT entry_seq FROM memory_entry_tags WHERE tag IN ({marks}){having}")
    if f.relevance_to:
        sets.append(f"SELECT entry_seq FROM memory_entry_relevance WHERE subtask_id IN"
                    f" ({', '.join('?' * len(f.relevance_to))})")
    if sets:
        # One IN constraint (an INTERSECT of the sets), which vec0 applies during the search.
        clauses.append(f"seq IN ({' INTERSECT '.join(sets)})")
    return "".join(f" AND {c}" for c in clauses), params


def _set_params(namespace: str, f: MemoryFilter) -> list[object]:
    """Parameters of _knn_filter's seq IN sets, in their order."""
    params: list[object] = []
    if f.task_id or f.subtask_id:
        params.append(namespace)
        params.extend(v for v in (f.task_id, f.subtask_id) if v)
    params.extend(f.tags)
    params.extend(f.relevance_to)
    return params


def nearest(reader: Reader, namespace: str, query: np.ndarray, k: int, task_id: str = "",
            f: MemoryFilter | None = None, candidates: int = 0) -> list[tuple[int, float]]:
    """The k entries (seq, cosine distance) of the namespace nearest to the query vector that match f (and
    task_id), nearest first. Every filter is applied inside the KNN, so k matching entries come back
    whenever the namespace has that many."""
    f = f or MemoryFilter()
    if task_id:
        f = dataclasses.replace(f, task_id=task_id)
    if k <= 0:
        return []
    vector = np.ascontiguousarray(query, dtype=np.float32)
    if reader.dialect == "postgres":
        recorded = recorded_model(reader)
        return memory_index.nearest(reader, namespace, vector, k, recorded[1], f) if recorded else []
    where, params = _knn_filter(f)
    params.extend(_set_params(namespace, f))
    wanted = min(VEC0_MAX_K, max(candidates or k * OVERSAMPLE, MIN_CANDIDATES, k))
    candidates = [int(row[0]) for row in reader.fetchall(
        f"SELECT seq FROM {VECTOR_TABLE} WHERE embedding MATCH vec_quantize_binary(?) AND k = ?"
        f" AND namespace = ?{where}", [vector.tobytes(), wanted, namespace, *params])]
    if not candidates:
        return []
    rows = reader.fetchall(f"SELECT seq, embedding FROM memory_embeddings WHERE seq IN"
                           f" ({', '.join('?' * len(candidates))})", candidates)
    seqs = np.array([row[0] for row in rows], dtype=np.int64)
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1)
    similarity = matrix @ vector
    # Best first; equal similarities keep the lower seq first (deterministic).
    order = np.lexsort((seqs, -similarity))[:k]
    return [(int(seqs[i]), float(1.0 - similarity[i])) for i in order]


async def summary_vectors(embedder: Embedder | None, entries: Sequence[NewMemoryEntry]) -> np.ndarray | None:
    """None: kept for callers written when memory entries were embedded before their write (StateService's
    AddDecision/AddError). insert_memory_entries given None queues the entries, and the server's
    background pass embeds them with everyone else's, batched, right after the commit; the caller
    no longer waits on the model. Pass None directly in new code."""
    return None


Progress = Callable[[int, int], None]


def rebuild(connection: sqlite3.Connection, model: str, dimension: int,
            embed: Callable[[list[str]], np.ndarray], progress: Progress, batch: int = 256) -> int:
    """Embed every memory summary with (model, dimension) and make those the vectors (emptying the
    embedding backlog); returns the count.

    The embedding runs in batches outside any write transaction (into a TEMP table of this
    connection), so a running server keeps writing meanwhile; one short transaction at the end
    embeds what was written since, swaps the vectors, rebuilds the index and records the model.
    An interrupted rebuild leaves the old vectors and model in place.
    """
    connection.execute("DROP TABLE IF EXISTS temp.reembed_vectors")
    connection.execute("CREATE TEMP TABLE reembed_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    total = int(connection.execute("SELECT count(*) FROM memory_entries").fetchone()[0])
    done = 0
    progress(done, total)
    last = 0

    def stage(limit: int | None) -> int:
        nonlocal last, done
        rows = connection.execute("SELECT seq, summary FROM memory_entries WHERE seq > ? ORDER BY seq"
                                  + (" LIMIT ?" if limit else ""), (last, limit) if limit else (last,)).fetchall()
        if not rows:
            return 0
        matrix = np.ascontiguousarray(embed([str(row[1]) for row in rows]), dtype=np.float32)
        if matrix.shape != (len(rows), dimension):
            raise ValueError(f"{model} returned vectors of shape {matrix.shape}, expected ({len(rows)}, {dimension})")
        connection.executemany("INSERT INTO temp.reembed_vectors (seq, embedding) VALUES (?, ?)",
                               [(row[0], matrix[i].tobytes()) for i, row in enumerate(rows)])
        last = int(rows[-1][0])
        done += len(rows)
        progress(done, max(total, done))
        return len(rows)

    while stage(batch):
        pass
    connection.execute("BEGIN IMMEDIATE")
    try:
        stage(None)  # entries written while the batches ran
        connection.execute("DELETE FROM memory_embeddings")
        connection.execute("INSERT INTO memory_embeddings (seq, embedding) SELECT seq, embedding FROM temp.reembed_vectors")
        connection.execute("DELETE FROM memory_embedding_queue")  # every entry has its vector now
        connection.execute(f"DROP TABLE IF EXISTS {VECTOR_TABLE}")
        connection.execute("DELETE FROM memory_embedding_model")
        connection.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at) VALUES (1, ?, ?, ?)",
                           (model, dimension, now_us()))
        _ensure_index(connection, dimension)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    finally:
        connection.execute("DROP TABLE IF EXISTS temp.reembed_vectors")
    return done
