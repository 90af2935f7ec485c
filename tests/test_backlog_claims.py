"""The embedding backlog shared by two replicas of one PostgreSQL database (whatever --engine says): each
claims its batches, so no entry is embedded by both, and a batch whose replica stalled or died is taken
over once its claim expires, the stalled replica's late vectors dropped."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryType, NewMemoryEntry
from taskmem.core.tasks import Task, TaskStatus
from taskmem.memory.embedding_backlog import EmbeddingBacklog
from taskmem.store.memory import memory_backlog, memory_vectors
from taskmem.store.tasks import tasks as task_store
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.access import Reader, Transaction
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from tests.support.postgres import database_url
from tests.support.eventually import HANG_GUARD_SECONDS

DIMENSION = 8
LEASE = 1.0  # seconds: short, so a takeover happens within the test


class RecordingEmbedder:
    """A fixed unit vector per text; remembers every text it embedded; can be held mid-call."""

    model_name = "recording"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.called = asyncio.Event()
        self.release: asyncio.Event | None = None  # set: calls wait for it

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        self.called.set()
        if self.release is not None:
            await self.release.wait()
        await asyncio.sleep(0.02)  # a model takes a while: the two replicas' batches interleave
        return np.tile(np.eye(DIMENSION, dtype=np.float32)[0], (len(texts), 1))


@pytest.fixture
async def replicas(tmp_path: Path) -> AsyncIterator[tuple[Storage, Storage]]:
    url = database_url(str(tmp_path / "backlog"))
    one, two = await open_storage(url, event_payload), await open_storage(url, event_payload)
    for storage in (one, two):
        storage.lease_seconds = LEASE
        await storage.write(lambda tx: memory_vectors.prepare_index(tx, RecordingEmbedder.model_name, DIMENSION),
                            "", "t")

    def create(tx: Transaction) -> None:
        task_store.create_task(tx, Task("default", "tsk_a", "tsk_a", TaskStatus.EXECUTING, now_us(), now_us()), [])
    await one.write(create, "default", "test")
    yield one, two
    await one.close()
    await two.close()


async def write_entries(storage: Storage, count: int) -> list[str]:
    summaries = [f"entry number {n}" for n in range(count)]
    for offset in range(0, count, 100):
        entries = [NewMemoryEntry(task_id="tsk_a", type=MemoryType.DISCOVERY, summary=s)
                   for s in summaries[offset:offset + 100]]
        await storage.write(lambda tx: insert_memory_entries(tx, entries), "default", "test")
    return summaries


def embedding_count(db: Reader) -> int:
    return int(db.fetchall("SELECT count(*) FROM memory_embeddings")[0][0])


async def drained(storage: Storage, seconds: float) -> float:
    started = time.monotonic()
    while await storage.read(memory_backlog.backlog_size):
        assert time.monotonic() - started < seconds, "the backlog was not drained"
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_two_replicas_never_embed_the_same_entries(replicas: tuple[Storage, Storage]) -> None:
    one, two = replicas
    summaries = await write_entries(one, 600)
    embedders = RecordingEmbedder(), RecordingEmbedder()
    passes = [EmbeddingBacklog(one, embedders[0], batch_size=50), EmbeddingBacklog(two, embedders[1], batch_size=50)]
    for backlog in passes:
        backlog.start()
    try:
        await drained(one, HANG_GUARD_SECONDS)
    finally:
        for backlog in passes:
            await backlog.stop()
    first, second = (set(e.texts) for e in embedders)
    assert first and second  # both replicas took batches
    assert not first & second
    assert len(embedders[0].texts) + len(embedders[1].texts) == 600
    assert first | second == set(summaries)
    assert await one.read(embedding_count) == 600


async def test_a_stalled_replicas_batch_is_taken_over_after_its_claim_and_its_late_vectors_are_dropped(
        replicas: tuple[Storage, Storage]) -> None:
    one, two = replicas
    summaries = await write_entries(one, 200)
    stalled, live = RecordingEmbedder(), RecordingEmbedder()
    stalled.release = asyncio.Event()
    stalled_pass = EmbeddingBacklog(one, stalled, batch_size=50)
    stalled_pass.start()
    live_pass = EmbeddingBacklog(two, live, batch_size=50)
    try:
        await asyncio.wait_for(stalled.called.wait(), HANG_GUARD_SECONDS)
        held = set(stalled.texts)
        assert len(held) == 50
        live_pass.start()
        took = await drained(two, HANG_GUARD_SECONDS)
        assert took >= LEASE / 2  # the stalled batch waited for its claim to expire
        assert set(live.texts) == set(summaries)  # the other 150 at once, the stalled 50 after the lease
        stalled.release.set()  # the stalled replica wakes and tries to store its batch
        await asyncio.sleep(0.5)
        assert await one.read(embedding_count) == 200  # its late vectors were not stored a second time
    finally:
        await stalled_pass.stop()
        await live_pass.stop()
