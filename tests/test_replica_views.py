"""Cached views on two replicas of one PostgreSQL database (whatever --engine says): a view one replica has
cached never hides a write committed through the other before the next read began."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2

from taskmem.v1 import task_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase


@pytest.fixture
def two_replicas(tmp_path: Path) -> Iterator[tuple[ServerOnDatabase, ServerOnDatabase]]:
    url = database_url(str(tmp_path / "views"))
    a, b = ServerOnDatabase(url), ServerOnDatabase(url)
    a.start()
    b.start()
    yield a, b
    for replica in (a, b):
        if replica.process is not None and replica.process.poll() is None:
            replica.stop()


async def test_a_cached_get_task_shows_a_write_made_through_another_replica_at_once(
        two_replicas: tuple[ServerOnDatabase, ServerOnDatabase]) -> None:
    a, b = two_replicas
    async with grpc.aio.insecure_channel(a.address) as to_a, grpc.aio.insecure_channel(b.address) as to_b:
        on_a, on_b = TaskServiceStub(to_a), TaskServiceStub(to_b)
        task = (await on_a.CreateTask(pb.CreateTaskRequest(name="name 0", plan=[
            task_pb2.PlanItemSpec(id="step-1", title="first step")]))).task
        for n in range(1, 21):
            before = (await on_a.GetTask(pb.GetTaskRequest(task_id=task.id))).task
            assert (await on_a.GetTask(pb.GetTaskRequest(task_id=task.id))).task == before  # served from the cache
            await on_b.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, name=f"name {n}"),
                                                       update_mask=field_mask_pb2.FieldMask(paths=["name"])))
            after = (await on_a.GetTask(pb.GetTaskRequest(task_id=task.id))).task
            assert after.name == f"name {n}", n
            assert after.etag != before.etag
        await on_a.GetTask(pb.GetTaskRequest(task_id=task.id))
        await on_b.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.id, item_id="step-1",
                                                           status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
        plan = (await on_a.GetTask(pb.GetTaskRequest(task_id=task.id))).plan
        assert plan.items[0].status == task_pb2.PLAN_ITEM_STATUS_COMPLETED


async def test_a_cached_context_shows_a_message_posted_through_another_replica_at_once(
        two_replicas: tuple[ServerOnDatabase, ServerOnDatabase]) -> None:
    a, b = two_replicas
    async with grpc.aio.insecure_channel(a.address) as to_a, grpc.aio.insecure_channel(b.address) as to_b:
        task_id = (await TaskServiceStub(to_a).CreateTask(pb.CreateTaskRequest(name="context"))).task.id
        state_a, tasks_b = StateServiceStub(to_a), TaskServiceStub(to_b)
        request = spb.BuildContextRequest(task_id=task_id, token_budget=2000)
        for n in range(10):
            before = (await state_a.BuildContext(request)).text
            assert (await state_a.BuildContext(request)).text == before  # served from the cache
            await tasks_b.PostMessage(pb.PostMessageRequest(
                task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER, content=f"remember the number {n} please"))
            assert f"remember the number {n} please" in (await state_a.BuildContext(request)).text, n
