"""The vectors of memory summaries, the model they come from, and the nearest-neighbour search over them.

memory_embeddings (migration 0006) holds each entry's exact float32 vector (L2-normalised) of the model
recorded in memory_embedding_model. A search pre-selects OVERSAMPLE × k candidates (at least
MIN_CANDIDATES) by Hamming distance between 1-bit quantised vectors, scanning the in-memory index of
store/memory/memory_vector_index.py (only the rows the filter allows), and rescores them exactly by cosine
against their float vectors. Earlier releases ran the pre-selection as a sqlite-vec vec0 KNN (18 ms CPU
at 100k vectors against ~2 ms now); start-up drops that table.

(This is the SQLite engine's index; on PostgreSQL memory_embeddings holds pgvector values with an
HNSW index, store/postgres/memory_index.py, and the functions here hand over to it.)
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sqlean as sqlite3

from taskmem.core.errors import InvalidArgument
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter, NewMemoryEntry
from taskmem.providers.embeddings import Embedder
from taskmem.store.memory import memory_filter_sets, memory_vector_index
from taskmem.store.unexpired import unexpired_sql
from taskmem.store.postgres import memory_index
from taskmem.store.memory.reembed_staging import ReembedStaging
from taskmem.store.access import Reader, Transaction

log = logging.getLogger(__name__)

VECTOR_TABLE = "memory_vectors"  # the sqlite-vec table of earlier releases, dropped at start-up
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


def _retire_vec0_table(connection: sqlite3.Connection) -> None:
    """Drop the sqlite-vec table earlier releases searched (memory_vectors), keeping the vectors of its first
    layout, which held them only there (float vectors; later layouts copied memory_embeddings)."""
    row = connection.execute("SELECT sql FROM sqlite_master WHERE name = ?", (VECTOR_TABLE,)).fetchone()
    if row is None:
        return
    if "FLOAT[" in str(row[0]).upper():
        connection.execute(f"INSERT OR IGNORE INTO memory_embeddings (seq, embedding)"
                           f" SELECT seq, embedding FROM {VECTOR_TABLE}")
        memory_vector_index.log_reset(connection.execute)
    connection.execute(f"DROP TABLE {VECTOR_TABLE}")
    log.info("dropped the sqlite-vec table of earlier releases (searches use the in-memory vector index)")


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
        _retire_vec0_table(tx.statements.connection)  # type: ignore[attr-defined]  # SQLite's own table
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
    memory_vector_index.log_stored(tx, [seq for seq, _ in blobs])


def nearest(reader: Reader, namespace: str, query: np.ndarray, k: int, task_id: str = "",
            f: MemoryFilter | None = None, candidates: int = 0) -> list[tuple[int, float]]:
    """The k entries (seq, cosine distance) of the namespace nearest to the query vector that match f (and
    task_id), nearest first. The filter narrows the rows pre-selected from, so k matching entries come back
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
    wanted = max(candidates or k * OVERSAMPLE, MIN_CANDIDATES, k)
    candidates = memory_vector_index.index_of(reader).nearest_seqs(
        reader, namespace, vector, wanted, memory_filter_sets.filter_seqs(reader, namespace, f))
    if not candidates:
        return []
    # Rescored without the expired candidates (core/retention.py), which may fill the pre-selection until
    # maintenance deletes them.
    unexpired, now = unexpired_sql("m")
    rows = reader.fetchall(f"SELECT e.seq, e.embedding FROM memory_embeddings e JOIN memory_entries m ON m.seq = e.seq"
                           f" WHERE e.seq IN ({', '.join('?' * len(candidates))}) AND {unexpired}", [*candidates, *now])
    if not rows:
        return []
    seqs = np.array([row[0] for row in rows], dtype=np.int64)
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1)
    similarity = matrix @ vector
    # Best first; equal similarities keep the lower seq first (deterministic).
    order = np.lexsort((seqs, -similarity))[:k]
    return [(int(seqs[i]), float(1.0 - similarity[i])) for i in order]


def similarities(reader: Reader, seqs: Sequence[int], query: np.ndarray) -> dict[int, float]:
    """The cosine similarity of each of these entries' vectors to the query vector; entries not embedded yet
    are left out."""
    if not seqs:
        return {}
    if reader.dialect == "postgres":
        return memory_index.similarities(reader, seqs, np.ascontiguousarray(query, dtype=np.float32))
    rows = reader.fetchall(f"SELECT seq, embedding FROM memory_embeddings WHERE seq IN ({', '.join('?' * len(seqs))})",
                           list(seqs))
    if not rows:
        return {}
    matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype=np.float32).reshape(len(rows), -1)
    similarity = matrix @ np.ascontiguousarray(query, dtype=np.float32)
    return {int(row[0]): float(similarity[i]) for i, row in enumerate(rows)}


def pair_similarities(reader: Reader, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], float]:
    """The cosine similarity of the two entries of each pair (by seq); a pair with an entry not embedded yet is
    left out."""
    if not pairs:
        return {}
    if reader.dialect == "postgres":
        return memory_index.pair_similarities(reader, pairs)
    seqs = sorted({seq for pair in pairs for seq in pair})
    rows = reader.fetchall(f"SELECT seq, embedding FROM memory_embeddings WHERE seq IN ({', '.join('?' * len(seqs))})",
                           seqs)
    vectors = {int(row[0]): np.frombuffer(row[1], dtype=np.float32) for row in rows}
    return {(a, b): float(vectors[a] @ vectors[b]) for a, b in pairs if a in vectors and b in vectors}


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
    embeds what was written since, swaps the vectors (logging a reset, so every server's in-memory index
    reloads) and records the model.
    An interrupted rebuild leaves the old vectors and model in place.
    """
    connection.execute("DROP TABLE IF EXISTS temp.reembed_vectors")
    connection.execute("CREATE TEMP TABLE reembed_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
    total = int(connection.execute("SELECT count(*) FROM memory_entries").fetchone()[0])

    def summaries_after(last: int, limit: int | None) -> list[Any]:
        return connection.execute("SELECT seq, summary FROM memory_entries WHERE seq > ? ORDER BY seq"
                                  + (" LIMIT ?" if limit else ""), (last, limit) if limit else (last,)).fetchall()

    def stage_vectors(vectors: list[tuple[int, np.ndarray]]) -> None:
        connection.executemany("INSERT INTO temp.reembed_vectors (seq, embedding) VALUES (?, ?)",
                               [(seq, vector.tobytes()) for seq, vector in vectors])

    staging = ReembedStaging(summaries_after, stage_vectors, embed, model, dimension, progress, total)
    staging.stage_all(batch)
    connection.execute("BEGIN IMMEDIATE")
    try:
        staging.stage(None)  # entries written while the batches ran
        connection.execute("DELETE FROM memory_embeddings")
        connection.execute("INSERT INTO memory_embeddings (seq, embedding) SELECT seq, embedding FROM temp.reembed_vectors")
        connection.execute("DELETE FROM memory_embedding_queue")  # every entry has its vector now
        memory_vector_index.log_reset(connection.execute)
        _retire_vec0_table(connection)
        connection.execute("DELETE FROM memory_embedding_model")
        connection.execute("INSERT INTO memory_embedding_model (id, model, dimension, recorded_at) VALUES (1, ?, ?, ?)",
                           (model, dimension, now_us()))
        connection.execute("COMMIT")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    finally:
        connection.execute("DROP TABLE IF EXISTS temp.reembed_vectors")
    return staging.done
