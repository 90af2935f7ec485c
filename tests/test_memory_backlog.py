"""The embedding backlog in process: entries written without vectors are queued with their commit and
embedded by EmbeddingBacklog in batches that span writes, in order, surviving a failing model."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryType, NewMemoryEntry
from taskmem.core.tasks import Task, TaskStatus
from taskmem.memory.embedding_backlog import EmbeddingBacklog
from taskmem.providers.embeddings import EmbeddingError
from taskmem.store.memory import memory_backlog, memory_vectors
from taskmem.store.tasks import tasks as task_store
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction
from tests.support.eventually import HANG_GUARD_SECONDS

DIMENSION = 8


class CountingEmbedder:
    """Returns a fixed unit vector per text and records each call; can be told to fail."""

    model_name = "counting"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.failing = False

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.failing:
            raise EmbeddingError("the model is down")
        self.calls.append(list(texts))
        return np.tile(np.eye(DIMENSION, dtype=np.float32)[0], (len(texts), 1))


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_storage(str(tmp_path / "taskmem.db"), event_payload)
    await opened.write(lambda tx: memory_vectors.prepare_index(tx, CountingEmbedder.model_name, DIMENSION), "", "t")

    def create(tx: Transaction) -> None:
        task_store.create_task(tx, Task("default", "tsk_a", "tsk_a", TaskStatus.EXECUTING, now_us(), now_us()), [])
    await opened.write(create, "default", "test")
    yield opened
    await opened.close()


async def _write(storage: Storage, *summaries: str) -> list[int]:
    entries = [NewMemoryEntry(task_id="tsk_a", type=MemoryType.DISCOVERY, summary=s) for s in summaries]
    return [e.seq for e in await storage.write(lambda tx: insert_memory_entries(tx, entries), "default", "test")]


async def test_entries_of_several_writes_are_embedded_in_one_model_call_in_order(storage: Storage) -> None:
    seqs = await _write(storage, "first", "second") + await _write(storage, "third") + await _write(storage, "fourth")
    assert await storage.read(memory_backlog.backlog_size) == 4
    embedder = CountingEmbedder()
    backlog = EmbeddingBacklog(storage, embedder, batch_size=256, poll_seconds=0.05)
    backlog.start()
    try:
        assert await backlog.wait_embedded(seqs[-1], timeout=HANG_GUARD_SECONDS)
    finally:
        await backlog.stop()
    assert embedder.calls == [["first", "second", "third", "fourth"]]
    assert await storage.read(memory_backlog.backlog_size) == 0
    assert await storage.read(memory_backlog.queued_among, seqs) == set()


async def test_a_failing_model_keeps_the_entries_queued_until_it_answers(storage: Storage) -> None:
    [seq] = await _write(storage, "kept")
    embedder = CountingEmbedder()
    embedder.failing = True
    backlog = EmbeddingBacklog(storage, embedder, poll_seconds=0.05)
    backlog.start()
    try:
        assert not await backlog.wait_embedded(seq, timeout=0.3)
        assert await storage.read(memory_backlog.queued_among, [seq]) == {seq}
        embedder.failing = False
        assert await backlog.wait_embedded(seq, timeout=HANG_GUARD_SECONDS)
    finally:
        await backlog.stop()
    assert embedder.calls == [["kept"]]


async def test_entries_written_with_their_vectors_never_join_the_backlog(storage: Storage) -> None:
    entries = [NewMemoryEntry(task_id="tsk_a", type=MemoryType.DISCOVERY, summary="already embedded")]
    vectors = np.eye(DIMENSION, dtype=np.float32)[1:2]
    await storage.write(lambda tx: insert_memory_entries(tx, entries, vectors), "default", "test")
    assert await storage.read(memory_backlog.backlog_size) == 0
