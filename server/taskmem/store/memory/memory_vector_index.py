"""An in-memory bit-vector index of memory summaries, one per database file, for the semantic pre-selection.

Each stored vector (memory_embeddings) is held here quantised to one bit per dimension (x > 0), packed
into 64-bit words, beside its seq and namespace. A search XORs the query's bits with the rows of its
namespace (or only the rows its filter allows), counts the differing bits and keeps the `count` nearest
by Hamming distance; memory_vectors.nearest rescores those exactly by cosine. It replaces sqlite-vec's
vec0 KNN for this step: on 100k × 384-d vectors the numpy scan takes ~2 ms CPU where the vec0 KNN took
~18 ms, and a filter narrows the rows scanned instead of being checked inside the KNN.

Kept exact across processes by memory_vector_changes (migration 0017): every writer of vectors logs the
seqs it stored in the same transaction (or a reset, -1, when `taskmem reembed` swaps them all). Before
each search the index applies the log rows past the last one it saw; a reset reloads it. Loaded in the
background at server start-up (`load`), or else by the first search: 100k vectors took 0.7 s CPU;
memory: dimension/8 bytes plus ~16 bytes per vector. The log keeps one row per vector until a reembed.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from taskmem.store.access import Reader, Row, Transaction

CHANGES_TABLE = "memory_vector_changes"
RESET = -1  # memory_vector_changes.present of a reset: every vector was replaced
# A catch-up with more changed vectors than this share of the index reloads it instead.
RELOAD_SHARE = 0.25
_LOAD_CHUNK = 4096


def log_stored(tx: Transaction, seqs: list[int]) -> None:
    """Record, in the transaction that stores them, that these entries' vectors were stored."""
    tx.executemany(f"INSERT INTO {CHANGES_TABLE} (seq, present) VALUES (?, 1)", [(seq,) for seq in seqs])


def log_reset(execute: Callable[[str], object]) -> None:
    """Record that every vector was replaced (the index reloads); the older log rows are no longer needed.
    execute: a connection's or transaction's execute."""
    execute(f"DELETE FROM {CHANGES_TABLE}")
    execute(f"INSERT INTO {CHANGES_TABLE} (seq, present) VALUES (0, {RESET})")


def pack_bits(matrix: np.ndarray) -> np.ndarray:
    """Rows of float vectors as rows of uint64 words, one bit per dimension (set where x > 0)."""
    packed = np.packbits(np.asarray(matrix) > 0, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(packed).view(np.uint64)


@dataclass
class _Rows:
    """Growable columns; rows [0, size) are live data. Appends write past size, so a search holding an
    older size is unaffected; growing replaces the arrays."""
    seqs: np.ndarray  # int64
    namespaces: np.ndarray  # int32 code; -1 for a row whose seq was stored again later
    bits: np.ndarray  # uint64 (words, capacity): one word of every row is contiguous, so the scan runs a
    # word at a time over all rows (6× faster than row by row at 384 dimensions)
    row_of_seq: np.ndarray  # int32 row of each seq, -1 where none
    size: int
    codes: dict[str, int]  # namespace → its code in `namespaces` (only ever added to)


class VectorIndex:
    """The bit vectors of one database file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._rows: _Rows | None = None
        self._last_change = -1

    def nearest_seqs(self, reader: Reader, namespace: str, query: np.ndarray, count: int,
                     allowed: np.ndarray | None = None) -> list[int]:
        """Seqs of the `count` vectors of the namespace nearest the query by Hamming distance (ties: lower
        row first); allowed: only these seqs (a filter's), or None for the whole namespace."""
        rows = self._current(reader)
        code = rows.codes.get(namespace) if rows is not None else None
        if rows is None or code is None or count <= 0:
            return []
        size = rows.size
        if allowed is None:
            in_namespace = rows.namespaces[:size] == code
            picked = None if in_namespace.all() else np.flatnonzero(in_namespace)
        else:
            seqs = allowed[(allowed >= 0) & (allowed < len(rows.row_of_seq))]
            picked = rows.row_of_seq[seqs]
            picked = picked[(picked >= 0) & (picked < size)]
            picked = np.sort(picked[rows.namespaces[picked] == code])
        if picked is not None and not len(picked):
            return []
        q = pack_bits(query.reshape(1, -1))[0]
        distance = np.zeros(size if picked is None else len(picked), dtype=np.uint16)
        for word in range(rows.bits.shape[0]):
            column = rows.bits[word, :size] if picked is None else rows.bits[word, picked]
            distance += np.bitwise_count(column ^ q[word])
        best = _smallest(distance, count)
        found = best if picked is None else picked[best]
        return [int(s) for s in rows.seqs[found]]

    def refresh(self, reader: Reader) -> int:
        """Bring the index up to the change log now; returns how many vectors it holds."""
        rows = self._current(reader)
        return 0 if rows is None else rows.size

    def _current(self, reader: Reader) -> _Rows | None:
        """The rows, first brought up to the log's newest change."""
        last = int(reader.fetchall(f"SELECT coalesce(max(id), 0) FROM {CHANGES_TABLE}")[0][0])
        if last == self._last_change:
            return self._rows
        with self._lock:
            if last > self._last_change:
                changes = reader.fetchall(f"SELECT id, seq, present FROM {CHANGES_TABLE} WHERE id > ? ORDER BY id",
                                          (self._last_change,))
                size = self._rows.size if self._rows is not None else 0
                if (self._rows is None or any(row[2] == RESET for row in changes)
                        or len(changes) > max(1000, size * RELOAD_SHARE)):
                    self._load(reader)
                elif changes:
                    self._apply(reader, [int(row[1]) for row in changes])
                    self._last_change = int(changes[-1][0])
            elif last < self._last_change:  # another database file now at this path
                self._load(reader)
            return self._rows

    def _load(self, reader: Reader) -> None:
        """Every vector, read in one snapshot with the log position it matches."""
        connection = reader.connection
        connection.execute("BEGIN")
        try:
            last = int(connection.execute(f"SELECT coalesce(max(id), 0) FROM {CHANGES_TABLE}").fetchone()[0])
            rows: _Rows | None = None  # built aside: searches meanwhile keep the old rows
            cursor = connection.execute("SELECT e.seq, m.namespace, e.embedding FROM memory_embeddings e"
                                        " JOIN memory_entries m ON m.seq = e.seq ORDER BY e.seq")
            while chunk := cursor.fetchmany(_LOAD_CHUNK):
                rows = _appended(rows, chunk)
        finally:
            connection.execute("COMMIT")
        self._rows, self._last_change = rows, last

    def _apply(self, reader: Reader, seqs: list[int]) -> None:
        """Add the vectors these seqs were given since the last catch-up (a seq stored again replaces its row)."""
        wanted = sorted(set(seqs))
        rows = []
        for start in range(0, len(wanted), 500):
            part = wanted[start:start + 500]
            rows.extend(reader.fetchall(
                f"SELECT e.seq, m.namespace, e.embedding FROM memory_embeddings e JOIN memory_entries m"
                f" ON m.seq = e.seq WHERE e.seq IN ({', '.join('?' * len(part))})", part))
        if self._rows is not None:
            for seq in wanted:
                if seq < len(self._rows.row_of_seq) and self._rows.row_of_seq[seq] >= 0:
                    self._rows.namespaces[self._rows.row_of_seq[seq]] = -1
        self._rows = _appended(self._rows, rows)


def _appended(current: _Rows | None, rows: Sequence[Row]) -> _Rows | None:
    """current with rows (seq, namespace, float32 vector blob) added: in place while the capacity lasts
    (past `size`, which no search reads), in new arrays beyond it; new rows when the dimension changed."""
    if not rows:
        return current
    bits = pack_bits(np.frombuffer(b"".join(row[2] for row in rows), dtype=np.float32).reshape(len(rows), -1))
    if current is None or current.bits.shape[0] != bits.shape[1]:
        current = _Rows(np.empty(0, np.int64), np.empty(0, np.int32), np.empty((bits.shape[1], 0), np.uint64),
                        np.full(0, -1, np.int32), 0, {})
    codes_of = current.codes
    seqs = np.array([int(row[0]) for row in rows], dtype=np.int64)
    codes = np.array([codes_of.setdefault(str(row[1]), len(codes_of)) for row in rows], dtype=np.int32)
    size, end = current.size, current.size + len(rows)
    if end > len(current.seqs):
        capacity = max(end, 2 * len(current.seqs), 1024)
        bits_grown = np.zeros((current.bits.shape[0], capacity), dtype=np.uint64)
        bits_grown[:, :size] = current.bits[:, :size]
        current = _Rows(_grown(current.seqs, capacity), _grown(current.namespaces, capacity),
                        bits_grown, current.row_of_seq, size, current.codes)
    top = int(seqs.max()) + 1
    if top > len(current.row_of_seq):
        row_of_seq = np.full(max(top, 2 * len(current.row_of_seq)), -1, np.int32)
        row_of_seq[:len(current.row_of_seq)] = current.row_of_seq
        current.row_of_seq = row_of_seq
    current.seqs[size:end] = seqs
    current.namespaces[size:end] = codes
    current.bits[:, size:end] = bits.T
    current.row_of_seq[seqs] = np.arange(size, end, dtype=np.int32)
    current.size = end
    return current


def _grown(array: np.ndarray, capacity: int) -> np.ndarray:
    grown = np.zeros(capacity, dtype=array.dtype)
    grown[:len(array)] = array
    return grown


def _smallest(distance: np.ndarray, count: int) -> np.ndarray:
    """Positions of the `count` smallest distances, nearest first, ties by position. Distances are small
    integers, so a histogram finds the cut-off (faster than a partition)."""
    if count >= len(distance):
        return np.lexsort((np.arange(len(distance)), distance))
    below = np.cumsum(np.bincount(distance))
    cut = int(np.searchsorted(below, count))  # the distance at which `count` rows are reached
    inside = np.flatnonzero(distance < cut)
    at_cut = np.flatnonzero(distance == cut)[:count - len(inside)]
    best = np.concatenate((inside, at_cut))
    return best[np.lexsort((best, distance[best]))]


_indexes: dict[object, VectorIndex] = {}
_indexes_lock = threading.Lock()


def index_of(reader: Reader) -> VectorIndex:
    """The index of the reader's database file (one per file, shared by the process's reader threads)."""
    path = str(reader.fetchall("PRAGMA database_list")[0][2])
    key: object = path or id(reader.connection)  # an in-memory database is its connection's own
    with _indexes_lock:
        index = _indexes.get(key)
        if index is None:
            index = _indexes[key] = VectorIndex()
        return index


def load(reader: Reader) -> int:
    """Load (or refresh) the index of the reader's database ahead of the first search; returns its size.
    SQLite's only: PostgreSQL searches its own HNSW index (store/postgres/memory_index.py)."""
    if reader.dialect == "postgres":
        return 0
    return index_of(reader).refresh(reader)
