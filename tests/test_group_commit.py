"""The group-commit writer on a real database (SQLite file, or PostgreSQL with --engine postgres): a batch's
mutations run grouped, their deferred rows written per statement, and one mutation that fails never costs
its neighbours their write, whether it failed before writing anything or after."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.core.actions import Action, ActionStatus, ActionType
from taskmem.core.errors import NotFound
from taskmem.core.events import EventFilter, EventType
from taskmem.core.ids import new_id
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.tasks import actions as action_store
from taskmem.store.tasks import tasks as task_store
from taskmem.store.access import Reader, Transaction
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from tests.support import server_process

NAMESPACE = "default"


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    database = str(tmp_path / "taskmem.db")
    if server_process.ENGINE == "postgres":
        from tests.support.postgres import database_url

        database = database_url(database)
    opened = await open_storage(database, event_payload)
    yield opened
    await opened.close()


async def create_task(storage: Storage) -> str:
    task_id = new_id("task")

    def create(tx: Transaction) -> None:
        task_store.create_task(tx, Task(NAMESPACE, task_id, "t", TaskStatus.EXECUTING, tx.now, tx.now), [])

    await storage.write(create, NAMESPACE, "test")
    return task_id


def new_action(tx: Transaction, task_id: str, summary: str) -> Action:
    return Action(namespace=tx.namespace, id=new_id("act"), task_id=task_id, type=ActionType.TOOL,
                  summary=summary, status=ActionStatus.SUCCEEDED, created_at=tx.now, completed_at=tx.now)


def record(task_id: str, summary: str):  # type: ignore[no-untyped-def]
    return lambda tx: action_store.record_action(tx, new_action(tx, task_id, summary))


def summaries(db: Reader, task_id: str) -> list[str]:
    return [row["summary"] for row in db.fetchall(
        "SELECT summary FROM actions WHERE namespace = ? AND task_id = ? ORDER BY summary", (NAMESPACE, task_id))]


async def write_in_one_batch(storage: Storage, mutations: list) -> list[object]:  # type: ignore[type-arg]
    """Submit every mutation before the writer wakes (so they form one batch); each one's value or error."""
    batches: list[int] = []
    storage.observe_batches(lambda writes, events, seconds: batches.append(writes))
    import asyncio

    results = await asyncio.gather(*(storage.write(m, NAMESPACE, "test") for m in mutations),
                                   return_exceptions=True)
    assert batches == [len(mutations)], f"the mutations ran in batches {batches}, not in one"
    return results


class Refused(Exception):
    pass


async def test_a_batch_commits_its_other_mutations_when_one_fails_after_writing(storage: Storage) -> None:
    task_id = await create_task(storage)
    before = await storage.read(task_store.load_task, NAMESPACE, task_id)

    def writes_then_fails(tx: Transaction) -> None:
        action_store.record_action(tx, new_action(tx, task_id, "half-done"))
        tx.execute("UPDATE tasks SET name = 'changed' WHERE namespace = ? AND id = ?", (NAMESPACE, task_id))
        raise Refused("after writing")

    created = (await storage.events.list(EventFilter(NAMESPACE, frozenset({task_id})), 0, 10))[-1].cursor
    results = await write_in_one_batch(
        storage, [record(task_id, "a0"), record(task_id, "a1"), writes_then_fails, record(task_id, "a3")])
    assert isinstance(results[2], Refused)
    assert [type(r) for i, r in enumerate(results) if i != 2] == [Action] * 3
    events = await storage.events.list(EventFilter(NAMESPACE), created, 10)
    assert await storage.read(summaries, task_id) == ["a0", "a1", "a3"]
    after = await storage.read(task_store.load_task, NAMESPACE, task_id)
    assert after.name == "t"  # the failed mutation's direct write was rolled back with it
    assert after.revision == before.revision + 3  # one touch for each action that committed
    assert [e.type for e in events] == [EventType.ACTION_RECORDED] * 3
    assert [e.cursor for e in events] == [created + 1, created + 2, created + 3]  # no gap
    assert [e.payload["summary"] for e in events] == ["a0", "a1", "a3"]  # in commit order


async def test_a_mutation_that_fails_before_writing_is_left_out_of_its_batch(storage: Storage) -> None:
    task_id = await create_task(storage)
    results = await write_in_one_batch(
        storage, [record(task_id, "b0"), record("task_missing", "lost"), record(task_id, "b2")])
    assert isinstance(results[1], NotFound)
    assert await storage.read(summaries, task_id) == ["b0", "b2"]
    assert await storage.read(summaries, "task_missing") == []


async def test_a_read_in_a_batch_sees_what_earlier_mutations_of_it_deferred(storage: Storage) -> None:
    task_id = await create_task(storage)
    before = await storage.read(task_store.load_task, NAMESPACE, task_id)
    recorded: list[Action] = []

    def record_and_keep(tx: Transaction) -> Action:
        action = action_store.record_action(tx, new_action(tx, task_id, "c0"))
        recorded.append(action)
        return action

    def read_back(tx: Transaction) -> tuple[str, int]:
        return action_store.load_action(tx, NAMESPACE, recorded[-1].id).summary, \
            task_store.load_task(tx, NAMESPACE, task_id).revision

    results = await write_in_one_batch(storage, [record_and_keep, record(task_id, "c1"), read_back])
    assert results[2] == ("c0", before.revision + 2)


async def test_touches_of_many_tasks_in_one_batch_each_count_once_per_mutation(storage: Storage) -> None:
    first, second = await create_task(storage), await create_task(storage)
    revisions = {t: (await storage.read(task_store.load_task, NAMESPACE, t)).revision for t in (first, second)}
    await write_in_one_batch(storage, [record(first, "d0"), record(second, "d1"), record(first, "d2"),
                                       record(first, "d3")])
    assert (await storage.read(task_store.load_task, NAMESPACE, first)).revision == revisions[first] + 3
    assert (await storage.read(task_store.load_task, NAMESPACE, second)).revision == revisions[second] + 1
    assert await storage.read(summaries, first) == ["d0", "d2", "d3"]


async def test_a_request_id_retried_within_one_batch_runs_once(storage: Storage) -> None:
    from taskmem.core.errors import RequestIdReused
    from taskmem.store.idempotency import Once, run_once
    from taskmem.v1 import task_service_pb2 as pb

    task_id = await create_task(storage)

    def once(summary: str, digest: str):  # type: ignore[no-untyped-def]
        key = Once("req-1", "RecordActionRequest", digest, pb.RecordActionResponse.FromString)
        return lambda tx: run_once(tx, key, lambda: pb.RecordActionResponse(
            action={"id": action_store.record_action(tx, new_action(tx, task_id, summary)).id}))

    results = await write_in_one_batch(storage, [once("e0", "same"), once("e1", "same"), once("e2", "other")])
    assert isinstance(results[2], RequestIdReused)
    assert results[0] == results[1]  # the retry got the first run's stored response
    assert await storage.read(summaries, task_id) == ["e0"]


async def test_a_deferred_row_that_cannot_be_written_fails_only_its_own_mutation(storage: Storage) -> None:
    task_id = await create_task(storage)

    def record_with_id(action_id: str, summary: str):  # type: ignore[no-untyped-def]
        def record_it(tx: Transaction) -> Action:
            action = new_action(tx, task_id, summary)
            action.id = action_id
            return action_store.record_action(tx, action)
        return record_it

    results = await write_in_one_batch(storage, [record_with_id("act_same", "f0"), record(task_id, "f1"),
                                                 record_with_id("act_same", "f2")])
    assert isinstance(results[2], Exception) and not isinstance(results[0], Exception)
    assert await storage.read(summaries, task_id) == ["f0", "f1"]
