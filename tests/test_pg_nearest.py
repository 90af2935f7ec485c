"""PostgreSQL's nearest-vector search narrowed by a filter: k matching entries come back whenever k match.

pgvector's HNSW walk stops at hnsw.ef_search (40) candidates unless iterative scans are on; a filter applied
to those few (a task, an as_of time) left 2 of 20 entries within a RealMem persona. This specifies the store
on a real PostgreSQL database, with the HNSW walk in the plan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.access import Transaction
from taskmem.store.engines import open_storage
from taskmem.store.memory import memory_vectors
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.memory.memory_search import semantic
from taskmem.store.storage import Storage
from taskmem.store.tasks import tasks as task_store
from tests.support.postgres import database_url

DIMENSION = 16
NAMESPACE = "default"


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_storage(database_url(str(tmp_path / "nearest")), event_payload)
    await opened.write(lambda tx: memory_vectors.prepare_index(tx, "test-model", DIMENSION), "", "test")

    def create(tx: Transaction) -> None:
        for task_id in ("tsk_crowd", "tsk_few"):
            task_store.create_task(tx, Task(NAMESPACE, task_id, task_id, TaskStatus.EXECUTING, now_us(), now_us()), [])
    await opened.write(create, NAMESPACE, "test")
    yield opened
    await opened.close()


def around(centre: np.ndarray, spread: float, count: int, rng: np.random.Generator) -> np.ndarray:
    vectors = (centre + spread * rng.normal(size=(count, DIMENSION))).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


async def add(storage: Storage, task_id: str, vectors: np.ndarray) -> list[int]:
    entries = [NewMemoryEntry(task_id=task_id, type=MemoryType.CONTEXT, summary=f"{task_id} {n}")
               for n in range(len(vectors))]
    written = await storage.write(lambda tx: insert_memory_entries(tx, entries, vectors), NAMESPACE, "test")
    return [entry.seq for entry in written]


async def test_a_search_within_a_task_finds_its_k_nearest_though_other_tasks_crowd_the_index(
        storage: Storage, tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    query = np.zeros(DIMENSION, dtype=np.float32)
    query[0] = 1.0
    await add(storage, "tsk_crowd", around(query, 0.1, 4000, rng))  # all nearer the query than the task's own
    aside = np.zeros(DIMENSION, dtype=np.float32)
    aside[1] = 1.0
    # A third of the entries: too many for PostgreSQL to sort them all rather than walk the index.
    few_vectors = around(query + aside, 0.3, 2000, rng)
    few = await add(storage, "tsk_few", few_vectors)
    nearest_first = [few[i] for i in np.argsort(-(few_vectors @ query), kind="stable")]

    url = database_url(str(tmp_path / "nearest"))
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("ANALYZE")  # as autovacuum would after these writes: the planner knows the task's share

    near = await storage.read(semantic, NAMESPACE, query, MemoryFilter(task_id="tsk_few"), 20)

    found = [seq for seq, _ in near]
    assert len(found) == 20 and set(found) <= set(few)
    assert [distance for _, distance in near] == sorted(distance for _, distance in near)  # nearest first
    # The walk is approximate (pgvector's HNSW): nearly all of the exact 20, not necessarily every one.
    assert len(set(found) & set(nearest_first[:20])) >= 18
    assert "memory_embeddings_hnsw" in plan_of_nearest(url, query)  # the walk is what this search took


def plan_of_nearest(url: str, query: np.ndarray) -> str:
    """The plan of a nearest-vector query within a task: the HNSW walk, so the filter meets its candidates."""
    vector = "[" + ",".join(str(float(x)) for x in query) + "]"
    sql = (f"SELECT e.seq FROM memory_embeddings e JOIN memory_entries m ON m.seq = e.seq"
           f" WHERE m.task_id = 'tsk_few' ORDER BY (e.embedding::vector({DIMENSION})) <=> '{vector}'::vector({DIMENSION})"
           f" LIMIT 20")
    with psycopg.connect(url, autocommit=True) as connection:
        return "\n".join(str(row[0]) for row in connection.execute("EXPLAIN " + sql).fetchall())
