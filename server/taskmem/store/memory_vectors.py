"""The vector index of memory summaries, and the model its vectors come from.

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
from taskmem.store import memory_vector_index
from taskmem.store.writer import Reader, Transaction

log = logging.getLogger(__name__)

VECTOR_TABLE = "memory_vectors"
# Bit-KNN candidates per wanted neighbour, rescored by cosine; at least MIN_CANDIDATES of them. Measured
# with bench/memory_eval.py --preselect (dev set: searches within ~480-turn conversations, limit 10):
# 3/40 found 83 % of the exact cosine top 10 and lost 4.3 % recall@10 to an exact scan; 6/80 96 %;
# 8/100 98.6 % and the exact scan's recall.
OVERSAMPLE = 8
MIN_CANDIDATES = 100


class EmbeddingModelMismatch(Exception):
    """The database holds vectors of another model than the configured one."""


def recorded_model(connection: sqlite3.Connection) -> tuple[str, int] | None:
    """(model name, dimension) the stored vectors were made with, or None before any model was used."""
    row = connection.execute("SELECT model, dimension FROM memory_embedding_model WHERE id = 1").fetchone()
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
            memory_vector_index.log_reset(connection.execute)
        connection.execute(f"DROP TABLE {VECTOR_TABLE}")
        log.info("rebuilding the memory vector index (layout changed)")
    connection.execute(wanted)
    connection.execute(_index_rows_sql())


def prepare_index(tx: Transaction, model: str, dimension: int) -> int:
    """At start-up, as a writer mutation: record the model on first use and create the vector index,
    or refuse another model (EmbeddingModelMismatch naming `taskmem reembed`). Returns how many entries
    wait in the embedding backlog (the background pass embeds them after start-up)."""
    recorded = recorded_model(tx.connection)
    if recorded is not None and recorded != (model, dimension):
        raise EmbeddingModelMismatch(mismatch_message(recorded, model, dimension))
    if recorded is None:
        tx.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at) VALUES (1, ?, ?, ?)",
                   (model, dimension, tx.now))
    _ensure_index(tx.connection, dimension)
    return missing_vectors(tx.connection)


def missing_vectors(connection: sqlite3.Connection) -> int:
    """How many memory entries wait in the embedding backlog (have no vector yet)."""
    return int(connection.execute("SELECT count(*) FROM memory_embedding_queue").fetchone()[0])


def insert_vectors(tx: Transaction, rows: Sequence[tuple[int, str]], vectors: np.ndarray) -> None:
    """Vectors of entries (seq, task_id) just written in tx; their dimension must be the recorded one."""
    recorded = recorded_model(tx.connection)
    if recorded is None:
        raise InvalidArgument("vectors", "no embedding model is recorded in this database")
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != recorded[1] or len(matrix) != len(rows):
        raise InvalidArgument("vectors", f"have shape {matrix.shape}; expected ({len(rows)}, {recorded[1]})")
    blobs = [(seq, matrix[i].tobytes()) for i, (seq, _) in enumerate(rows)]
    tx.executemany("INSERT INTO memory_embeddings (seq, embedding) VALUES (?, ?)", blobs)
    tx.executemany(_index_rows_sql() + " WHERE e.seq = ?", [(seq,) for seq, _ in blobs])
    memory_vector_index.log_stored(tx, [seq for seq, _ in blobs])


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
    wanted = max(candidates or k * OVERSAMPLE, MIN_CANDIDATES, k)
    candidates = memory_vector_index.index_of(reader).nearest_seqs(
        reader, namespace, vector, wanted, memory_vector_index.filter_seqs(reader, namespace, f))
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
        memory_vector_index.log_reset(connection.execute)
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
