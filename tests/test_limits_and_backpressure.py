"""Absurd input gets INVALID_ARGUMENT naming the field; a slow subscriber costs no unbounded memory."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf import timestamp_pb2

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

INVALID = grpc.StatusCode.INVALID_ARGUMENT


async def test_out_of_range_numbers_and_times_name_their_field(tasks: TaskServiceStub) -> None:
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="limits"))).task.id
    cases = [
        (tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary="x", tokens_out=2**62)), "tokens_out"),
        (tasks.ListTasks(pb.ListTasksRequest(updated_after=timestamp_pb2.Timestamp(seconds=10**15))), "updated_after"),
        (tasks.ListTasks(pb.ListTasksRequest(page_size=-1)), "page_size"),
        (tasks.GetPlan(pb.GetPlanRequest(task_id=task_id, version=-3)), "version"),
        (tasks.GetProgress(pb.GetProgressRequest(task_id=task_id, recent_message_count=1000)), "recent_message_count"),
        (tasks.ListEvents(pb.ListEventsRequest(after_cursor=-5)), "after_cursor"),
        (tasks.GetTask(pb.GetTaskRequest(task_id="x" * 65)), "task_id"),
        (tasks.CreateTask(pb.CreateTaskRequest(name="n", plan=[task_pb2.PlanItemSpec(id=f"i{n}", title="t")
                                                            for n in range(501)])), "plan"),
        (tasks.AppendActionLog(pb.AppendActionLogRequest(action_id="act_1")), "lines"),
    ]
    for call, field in cases:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await call
        assert raised.value.code() == INVALID, (field, raised.value.details())
        assert field in raised.value.details()


async def test_a_request_over_the_size_limit_is_refused_by_size_not_unknown(tasks: TaskServiceStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await tasks.CreateTask(pb.CreateTaskRequest(name="big", goal="x" * (5 * 1024 * 1024)))
    assert raised.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_subscriber_that_stops_reading_catches_up_from_the_database(fresh_server: ServerProcess) -> None:
    fresh_server.env["TASKMEM_SUBSCRIBER_QUEUE_SIZE"] = "8"
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="slow reader"))).task.id
        # From the start of the new task's messages: posts made before the subscription is registered are
        # read from the database too, however long a loaded machine takes to register it.
        stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(
            task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED], after_cursor=0))
        first = asyncio.ensure_future(stream.read())
        for i in range(300):  # far more than the 8-event live queue, while the reader sleeps
            await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                          content="x" * 2000 + str(i)))
        contents = [(await first).event.payload["content"]]
        while len(contents) < 300:
            response = await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
            contents.append(response.event.payload["content"])
        stream.cancel()
    assert [c[2000:] for c in contents] == [str(i) for i in range(300)]
