"""The embedding backlog: memory entries acknowledged but not embedded yet (migration 0009).

insert_memory_entries (store/memory/memory_entries.py) queues every entry written without a vector; the background pass
(taskmem/memory/embedding_backlog.py) takes the oldest ones with `pending_summaries`, embeds them
outside any transaction, and hands the vectors to `store_backlog_vectors`, which writes them and
takes the entries off the queue in one transaction. Searches ask which of their hits, and how many
entries of their filter, still wait.

Replicas on one PostgreSQL database share the queue: each claims its batch with `claim_summaries`
(FOR UPDATE SKIP LOCKED on the queue rows, claimed_by and claim_expires_at of PostgreSQL migration
0004), so no two embed the same entries, and stores with `store_claimed_vectors` only the vectors of
the entries it still holds: a replica that died or stalled past its claim has its batch taken over, and
a late write of the old holder changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from taskmem.core.memory import MemoryFilter
from taskmem.store.memory import memory_vectors
from taskmem.store.memory.memory_filter_sql import filter_sql
from taskmem.store.access import Reader, Transaction


def pending_summaries(reader: Reader, limit: int) -> list[tuple[int, str]]:
    """(seq, summary) of the oldest `limit` queued entries, oldest first."""
    return [(int(row[0]), str(row[1])) for row in reader.fetchall(
        "SELECT q.seq, m.summary FROM memory_embedding_queue q JOIN memory_entries m ON m.seq = q.seq"
        " ORDER BY q.seq LIMIT ?", (limit,))]


def claim_summaries(tx: Transaction, holder: str, limit: int, seconds: float) -> list[tuple[int, str]]:
    """PostgreSQL replicas: claim the oldest `limit` queued entries no other replica holds (unclaimed, expired,
    or this holder's own) for `seconds`; (seq, summary) of each, oldest first."""
    tx.quiet = True  # claims show in no view
    claimed = tx.fetchall(
        "WITH batch AS (SELECT seq FROM memory_embedding_queue WHERE claimed_by IS NULL OR claimed_by = ?"
        " OR claim_expires_at < ? ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED)"
        " UPDATE memory_embedding_queue q SET claimed_by = ?, claim_expires_at = ? FROM batch"
        " WHERE q.seq = batch.seq RETURNING q.seq",
        (holder, tx.now, limit, holder, tx.now + int(seconds * 1_000_000)))
    seqs = sorted(int(row[0]) for row in claimed)
    if not seqs:
        return []
    rows = tx.fetchall(f"SELECT seq, summary FROM memory_entries WHERE seq IN ({', '.join('?' * len(seqs))})"
                       " ORDER BY seq", seqs)
    return [(int(row[0]), str(row[1])) for row in rows]


def store_claimed_vectors(tx: Transaction, holder: str, seqs: Sequence[int], vectors: np.ndarray) -> int:
    """PostgreSQL replicas: store_backlog_vectors for the entries the holder still holds (an entry taken over
    by another replica after this holder's claim expired is left to that replica)."""
    marks = ", ".join("?" * len(seqs))
    held = {int(row[0]) for row in tx.fetchall(
        f"SELECT seq FROM memory_embedding_queue WHERE seq IN ({marks}) AND claimed_by = ?{tx.row_lock}",
        [*seqs, holder])}
    keep = [i for i, seq in enumerate(seqs) if seq in held]
    if not keep:
        return 0
    return store_backlog_vectors(tx, [seqs[i] for i in keep], vectors[keep])


def store_backlog_vectors(tx: Transaction, seqs: Sequence[int], vectors: np.ndarray) -> int:
    """Write the vectors of queued entries (seqs in the order of the vectors' rows) and take them off the
    queue; entries no longer queued (a `taskmem reembed` ran meanwhile) are skipped. Returns how many
    were stored. Raises InvalidArgument when the vectors do not fit the recorded model."""
    marks = ", ".join("?" * len(seqs))
    queued = {int(row[0]) for row in tx.fetchall(f"SELECT seq FROM memory_embedding_queue WHERE seq IN ({marks})",
                                                 list(seqs))}
    keep = [i for i, seq in enumerate(seqs) if seq in queued]
    if not keep:
        return 0
    memory_vectors.insert_vectors(tx, [(seqs[i], "") for i in keep], vectors[keep])
    tx.executemany("DELETE FROM memory_embedding_queue WHERE seq = ?", [(seqs[i],) for i in keep])
    return len(keep)


def any_queued(reader: Reader) -> bool:
    """Whether any entry waits for its embedding (cheaper than counting them)."""
    return bool(reader.fetchall("SELECT 1 FROM memory_embedding_queue LIMIT 1"))


def backlog_size(reader: Reader) -> int:
    """How many entries wait for their embedding, in every namespace."""
    return int(reader.fetchall("SELECT count(*) FROM memory_embedding_queue")[0][0])


def last_entry_seq(reader: Reader) -> int:
    """The newest memory entry's seq (0 with none): everything acknowledged so far is at or below it."""
    return int(reader.fetchall("SELECT coalesce(max(seq), 0) FROM memory_entries")[0][0])


def queued_through(reader: Reader, seq: int) -> bool:
    """Whether an entry at or below seq still waits for its embedding."""
    return bool(reader.fetchall("SELECT 1 FROM memory_embedding_queue WHERE seq <= ? LIMIT 1", (seq,)))


def queued_among(reader: Reader, seqs: Sequence[int]) -> set[int]:
    """Which of these entries still wait for their embedding."""
    if not seqs:
        return set()
    return {int(row[0]) for row in reader.fetchall(
        f"SELECT seq FROM memory_embedding_queue WHERE seq IN ({', '.join('?' * len(seqs))})", list(seqs))}


def queued_matching(reader: Reader, namespace: str, f: MemoryFilter) -> int:
    """How many entries of the namespace matching f wait for their embedding (0 at once when none wait)."""
    if not reader.fetchall("SELECT 1 FROM memory_embedding_queue LIMIT 1"):
        return 0
    where, params = filter_sql(f, namespace, per_row=True)
    return int(reader.fetchall(f"SELECT count(*) FROM memory_embedding_queue q CROSS JOIN memory_entries m"
                               f" ON m.seq = q.seq WHERE {where}", params)[0][0])
