"""Maintenance end to end with clocks shortened through configuration: stuck alerts with a
cooldown, auto-pause, auto-archive; every action an event, nothing deleted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any, TypeVar

import grpc
import pytest
from google.protobuf import field_mask_pb2

from taskmem.v1 import event_pb2, task_pb2, wait_pb2
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.server_process import ServerProcess
from tests.support.eventually import eventually

T = TypeVar("T")

SHORT_CLOCKS = {
    "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0.3",
    "TASKMEM_STUCK_AFTER_SECONDS": "1",
    "TASKMEM_STUCK_ALERT_COOLDOWN_SECONDS": "2.5",
    "TASKMEM_AUTO_PAUSE_AFTER_SECONDS": "6",
    "TASKMEM_AUTO_ARCHIVE_AFTER_SECONDS": "1.5",
}


@pytest.fixture(scope="module")
def maintained_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("maintenance") / "taskmem.db", env=SHORT_CLOCKS)
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def tasks(maintained_server: ServerProcess) -> AsyncIterator[TaskServiceStub]:
    async with grpc.aio.insecure_channel(maintained_server.address) as channel:
        yield TaskServiceStub(channel)


async def working_task(tasks: TaskServiceStub, **fields: Any) -> task_pb2.Task:
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="long job", **fields))).task
    return (await tasks.UpdateTask(tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_EXECUTING),
        update_mask=field_mask_pb2.FieldMask(paths=["status"])))).task


async def messages_of(tasks: TaskServiceStub, task_id: str, kind: int) -> list[task_pb2.Message]:
    page = await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id, kinds=[kind]))  # type: ignore[list-item]
    return list(page.messages)


async def events_of(tasks: TaskServiceStub, task_id: str, kind: int) -> list[event_pb2.Event]:
    page = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[kind]))  # type: ignore[list-item]
    return list(page.events)


async def test_an_idle_task_gets_stuck_alerts_with_a_cooldown_then_is_paused(tasks: TaskServiceStub) -> None:
    task = await working_task(tasks)
    first = await eventually(lambda: messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_STUCK), "a stuck message")
    assert first[0].role == task_pb2.MESSAGE_ROLE_SYSTEM and first[0].content.startswith("[Stuck] no update for")
    alerted = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task
    assert alerted.update_time == task.update_time, "an alert must not reset the idle clock"
    assert alerted.metadata["last_stuck_alert_at"] >= task.update_time.seconds
    stuck_events = await events_of(tasks, task.id, event_pb2.EVENT_TYPE_TASK_STUCK)
    assert len(stuck_events) == 1 and stuck_events[0].payload["message_id"] == first[0].id

    alerts = await eventually(lambda: _at_least(messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_STUCK), 2),
                              "a second stuck message")
    # The cooldown read from the alerts' own times, not from a sleep that a loaded machine could outlast.
    apart = alerts[1].create_time.ToMicroseconds() - alerts[0].create_time.ToMicroseconds()
    assert apart >= 2.5 * 1_000_000, f"the second alert came {apart / 1e6:.2f} s after the first, within the cooldown"

    async def paused() -> task_pb2.Task | None:
        current = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task
        return current if current.status == task_pb2.TASK_STATUS_PAUSED else None

    now_paused = await eventually(paused, "the task paused")
    assert now_paused.HasField("pause_time")
    assert len(await events_of(tasks, task.id, event_pb2.EVENT_TYPE_TASK_AUTO_PAUSED)) == 1
    lifecycle = await messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_LIFECYCLE)
    assert lifecycle[-1].content.startswith("[Auto-paused] no update for")
    changes = await events_of(tasks, task.id, event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED)
    assert changes[-1].payload["to"] == "TASK_STATUS_PAUSED"


async def _at_least(listing: Awaitable[list[T]], count: int) -> list[T] | None:
    items = await listing
    return items if len(items) >= count else None


async def test_a_task_with_an_open_wait_is_neither_alerted_nor_paused(
        tasks: TaskServiceStub, maintained_server: ServerProcess) -> None:
    task = await working_task(tasks)
    async with grpc.aio.insecure_channel(maintained_server.address) as channel:
        waits = WaitServiceStub(channel)
        wait = (await waits.CreateWait(wpb.CreateWaitRequest(
            task_id=task.id, target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())))).wait
        await asyncio.sleep(3)
        # Only alerts from after the wait count: on a loaded machine the task may have idled past 1 s before the
        # wait was made, and a maintenance pass (0.3 s) that began before it may still write one.
        since = wait.create_time.ToMicroseconds() + 300_000
        stuck = await messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_STUCK)
        assert not [m for m in stuck if m.create_time.ToMicroseconds() > since]
        assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.status == task_pb2.TASK_STATUS_EXECUTING
        await waits.CancelWait(wpb.CancelWaitRequest(wait_id=wait.id))
    await eventually(lambda: messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_STUCK), "a stuck message")


async def test_a_finished_task_is_archived_and_stays_readable(tasks: TaskServiceStub) -> None:
    task = await working_task(tasks, plan=[task_pb2.PlanItemSpec(id="a", title="do a")])
    await tasks.PostMessage(tpb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="done"))
    await tasks.UpdateTask(tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_COMPLETED, final_answer="42"),
        update_mask=field_mask_pb2.FieldMask(paths=["status", "final_answer"])))

    async def archived() -> tpb.GetTaskResponse | None:
        current = await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))
        return current if current.task.status == task_pb2.TASK_STATUS_ARCHIVED else None

    record = await eventually(archived, "the task archived")
    assert record.task.final_answer == "42" and record.task.HasField("archive_time")
    assert [i.id for i in record.plan.items] == ["a"]
    texts = [m.content for m in (await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task.id))).messages]
    assert "done" in texts and texts[-1].startswith("[Auto-archived] COMPLETED")
    archive_events = await events_of(tasks, task.id, event_pb2.EVENT_TYPE_TASK_AUTO_ARCHIVED)
    assert len(archive_events) == 1 and archive_events[0].payload["status"] == "TASK_STATUS_ARCHIVED"
    assert "finished_for" in archive_events[0].payload


async def test_maintenance_is_off_when_its_interval_is_zero(fresh_server: ServerProcess) -> None:
    fresh_server.env.update({**SHORT_CLOCKS, "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0"})
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        task = await working_task(tasks)
        await asyncio.sleep(2)
        assert not await messages_of(tasks, task.id, task_pb2.MESSAGE_KIND_STUCK)
