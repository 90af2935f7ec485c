"""The background pass that embeds memory entries after they are acknowledged.

Writers commit entries with no vector; each lands in memory_embedding_queue in the same transaction
(store/memory/memory_entries.py). This loop takes the oldest queued entries in batches that span calls and
services (up to `batch_size` summaries per model call), embeds them off the event loop, and writes the
vectors while taking the entries off the queue in one transaction. It runs whenever the queue is not
empty: woken at once by MemoryService after a write, and every `poll_seconds` for other writers. The
queue is in the database, so a restart resumes it. A failing embedding backend is retried with growing
pauses (nothing is dropped); searches meanwhile report the entries as not yet embedded.

Replicas on one database (storage.shared) each run this pass: a batch is claimed with a lease rather
than read (store/memory_backlog.claim_summaries), so no two replicas embed the same entries, and only
the vectors of entries still held are stored; a killed replica's batch is claimed by another once its
lease has passed. A batch must be embedded within the lease (storage.lease_seconds), or another replica
may take it and this one's vectors are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import numpy as np

from taskmem.core.errors import InvalidArgument, StorageFull
from taskmem.core.ids import new_id
from taskmem.providers.embeddings import Embedder, EmbeddingError
from taskmem.providers.model_meter import model_work
from taskmem.store.memory import memory_backlog
from taskmem.store.storage import Storage, WriterClosed
from taskmem.store.usage import model_calls

log = logging.getLogger(__name__)

RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 30.0
# Replicas: when every queued entry is held by other replicas, look again after this long (not at once).
HELD_ELSEWHERE_SECONDS = 0.1


class EmbeddingBacklog:
    def __init__(self, storage: Storage, embedder: Embedder, batch_size: int = 256,
                 poll_seconds: float = 1.0) -> None:
        self._storage = storage
        self._embedder = embedder
        self._batch_size = max(1, batch_size)
        self._poll_seconds = poll_seconds
        self._wake = asyncio.Event()
        # Set (and replaced) after every batch stored and whenever the queue is found empty: waiters hold
        # the event current when they last looked, so no progress between their look and their wait is missed.
        self._progress = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.embedded = 0  # entries embedded since start (for logs and benchmarks)
        self._holder = new_id("rep")  # replicas: this pass's name on the batches it claims

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="taskmem-embedding-backlog")

    async def stop(self) -> None:
        """Stop between batches or mid-embedding; what is not stored stays queued for the next start."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def notify(self) -> None:
        """New entries were queued: run now rather than at the next poll."""
        self._wake.set()

    async def wait_embedded(self, through_seq: int, timeout: float) -> bool:
        """Wait until no entry at or below through_seq is queued, at most timeout seconds; True if none is."""
        deadline = time.monotonic() + timeout
        while True:
            progress = self._progress
            if not await self._storage.read(memory_backlog.queued_through, through_seq):
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.notify()
            try:
                async with asyncio.timeout(remaining):  # not wait_for: see _run
                    await progress.wait()
            except TimeoutError:
                return False

    def _advanced(self) -> None:
        self._progress.set()
        self._progress = asyncio.Event()

    async def _take_batch(self) -> list[tuple[int, str]]:
        """The oldest queued entries; with replicas, those this pass could claim."""
        if not self._storage.shared:
            return await self._storage.read(memory_backlog.pending_summaries, self._batch_size)
        if not await self._storage.read(memory_backlog.any_queued):
            return []  # a read, not a claim (a write), for every idle poll of every replica
        try:
            batch: list[tuple[int, str]] = await self._storage.write(
                lambda tx: memory_backlog.claim_summaries(tx, self._holder, self._batch_size,
                                                          self._storage.lease_seconds), "", "embedding-backlog")
        except WriterClosed:
            return []  # shutting down: stop() ends this pass
        except Exception as error:  # the database is unreachable: nothing claimed, try again shortly
            log.warning("embedding backlog: claiming a batch failed (%s)", error)
            await asyncio.sleep(RETRY_FIRST_SECONDS)
            return []
        return batch

    async def _store(self, seqs: list[int], vectors: np.ndarray) -> None:
        if self._storage.shared:
            await self._storage.write(lambda tx: memory_backlog.store_claimed_vectors(tx, self._holder, seqs, vectors),
                                      "", "embedding-backlog")
        else:
            await self._storage.write(lambda tx: memory_backlog.store_backlog_vectors(tx, seqs, vectors),
                                      "", "embedding-backlog")

    async def _run(self) -> None:
        pause = RETRY_FIRST_SECONDS
        while True:
            self._wake.clear()
            batch = await self._take_batch()
            if not batch:
                if self._storage.shared and await self._storage.read(memory_backlog.any_queued):
                    await asyncio.sleep(HELD_ELSEWHERE_SECONDS)  # other replicas are embedding them
                self._advanced()
                # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation that
                # arrives as the wake-up is set, and the pass would outlive close() (as the event tail did).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._poll_seconds):
                        await self._wake.wait()
                continue
            seqs = [seq for seq, _ in batch]
            try:
                # A batch spans namespaces and tasks: an endpoint's usage is recorded for each by its share.
                with model_work(shares=await self._storage.read(model_calls.entry_shares, seqs)):
                    vectors = await self._embedder.embed([summary for _, summary in batch])
                await self._store(seqs, vectors)
            except (EmbeddingError, InvalidArgument, StorageFull) as error:
                # InvalidArgument: the recorded model changed under us (`taskmem reembed` with another
                # model); the server must restart with the new settings, so keep the entries queued.
                # StorageFull: the vectors are computed again once the disk has room.
                log.warning("embedding backlog: %d entries wait (%s); retrying in %.1f s", len(batch), error, pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MAX_SECONDS)
                continue
            except Exception:
                # Anything else (a database error) must not end the pass for the life of the server:
                # the entries stay queued and the batch is tried again after the pause.
                log.exception("embedding backlog: storing %d vectors failed; retrying in %.1f s", len(batch), pause)
                await asyncio.sleep(pause)
                pause = min(pause * 2, RETRY_MAX_SECONDS)
                continue
            pause = RETRY_FIRST_SECONDS
            self.embedded += len(batch)
            self._advanced()
