"""The vector index of memory summaries: a sqlite-vec vec0 table, and the model its vectors come from.

memory_vectors(seq, namespace PARTITION KEY, task_id metadata, embedding float[d] cosine) is
created for the dimension of the model recorded in memory_embedding_model. A KNN search is
`embedding MATCH ? AND k = ? AND namespace = ?`: the partition key keeps it inside the
caller's namespace, the task_id metadata column inside one task when asked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np
import sqlean as sqlite3

from taskmem.core.errors import InvalidArgument
from taskmem.core.ids import now_us
from taskmem.core.memory import NewMemoryEntry
from taskmem.providers.embeddings import Embedder
from taskmem.store.writer import Reader, Transaction

log = logging.getLogger(__name__)

VECTOR_TABLE = "memory_vectors"


class EmbeddingModelMismatch(Exception):
    """The database holds vectors of another model than the configured one."""


def recorded_model(connection: sqlite3.Connection) -> tuple[str, int] | None:
    """(model name, dimension) the stored vectors were made with, or None before any model was used."""
    row = connection.execute("SELECT model, dimension FROM memory_embedding_model WHERE id = 1").fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def _create_table(connection: sqlite3.Connection, dimension: int) -> None:
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {VECTOR_TABLE} USING vec0("
        " seq INTEGER PRIMARY KEY, namespace TEXT PARTITION KEY, task_id TEXT,"
        f" embedding FLOAT[{int(dimension)}] distance_metric=cosine)")


def prepare_index(connection: sqlite3.Connection, model: str, dimension: int) -> int:
    """At start-up: record the model on first use and create the vector table, or refuse another model.

    Returns how many memory entries have no vector yet (written with the `none` backend).
    """
    recorded = recorded_model(connection)
    if recorded is not None and recorded != (model, dimension):
        raise EmbeddingModelMismatch(
            f"embedding_backend: the database holds vectors of {recorded[0]} ({recorded[1]} dimensions) but the"
            f" server is configured for {model} ({dimension} dimensions); run `taskmem reembed` with the new"
            " settings to rebuild the vectors, or configure the recorded model")
    connection.execute("BEGIN IMMEDIATE")
    try:
        if recorded is None:
            connection.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at)"
                               " VALUES (1, ?, ?, ?)", (model, dimension, now_us()))
        _create_table(connection, dimension)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return missing_vectors(connection)


def missing_vectors(connection: sqlite3.Connection) -> int:
    entries = connection.execute("SELECT count(*) FROM memory_entries").fetchone()[0]
    vectors = connection.execute(f"SELECT count(*) FROM {VECTOR_TABLE}").fetchone()[0]
    return int(entries - vectors)


def insert_vectors(tx: Transaction, rows: Sequence[tuple[int, str]], vectors: np.ndarray) -> None:
    """Vectors of entries (seq, task_id) of tx.namespace; their dimension must be the recorded one."""
    recorded = recorded_model(tx.connection)
    if recorded is None:
        raise InvalidArgument("vectors", "no embedding model is recorded in this database")
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[1] != recorded[1]:
        raise InvalidArgument("vectors", f"have shape {matrix.shape}; the recorded model has {recorded[1]} dimensions")
    tx.executemany(f"INSERT INTO {VECTOR_TABLE} (seq, namespace, task_id, embedding) VALUES (?, ?, ?, ?)",
                   [(seq, tx.namespace, task_id, matrix[i].tobytes()) for i, (seq, task_id) in enumerate(rows)])


def nearest(reader: Reader, namespace: str, query: np.ndarray, k: int, task_id: str = "") -> list[tuple[int, float]]:
    """The k entries (seq, cosine distance) of the namespace nearest to the query vector, nearest first."""
    sql = (f"SELECT seq, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? AND namespace = ?"
           + (" AND task_id = ?" if task_id else "") + " ORDER BY distance")
    params: list[object] = [np.ascontiguousarray(query, dtype=np.float32).tobytes(), k, namespace]
    if task_id:
        params.append(task_id)
    return [(int(row[0]), float(row[1])) for row in reader.fetchall(sql, params)]


async def summary_vectors(embedder: Embedder | None, entries: Sequence[NewMemoryEntry]) -> np.ndarray | None:
    """Embeddings of the entries' summaries for insert_memory_entries, or None with no embedder."""
    if embedder is None or not entries:
        return None
    return await embedder.embed([entry.summary for entry in entries])


def rebuild(connection: sqlite3.Connection, model: str, dimension: int,
            embed: Callable[[list[str]], np.ndarray], progress: Callable[[int, int], None],
            chunk: int = 512) -> int:
    """Drop every vector and embed every summary again with another model; returns the count.

    Runs in one transaction: an interrupted rebuild leaves the old vectors and model in place.
    """
    total = connection.execute("SELECT count(*) FROM memory_entries").fetchone()[0]
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(f"DROP TABLE IF EXISTS {VECTOR_TABLE}")
        connection.execute("DELETE FROM memory_embedding_model")
        connection.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at) VALUES (1, ?, ?, ?)",
                           (model, dimension, now_us()))
        _create_table(connection, dimension)
        done = 0
        progress(done, total)
        last = 0
        while True:
            rows = connection.execute("SELECT seq, namespace, task_id, summary FROM memory_entries WHERE seq > ?"
                                      " ORDER BY seq LIMIT ?", (last, chunk)).fetchall()
            if not rows:
                break
            matrix = np.ascontiguousarray(embed([row[3] for row in rows]), dtype=np.float32)
            connection.executemany(
                f"INSERT INTO {VECTOR_TABLE} (seq, namespace, task_id, embedding) VALUES (?, ?, ?, ?)",
                [(row[0], row[1], row[2], matrix[i].tobytes()) for i, row in enumerate(rows)])
            last = rows[-1][0]
            done += len(rows)
            progress(done, total)
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    return done
