"""ListActions filtered by status: what runs now, however long the task's history."""

from __future__ import annotations

import grpc
import pytest

from taskmem.v1 import task_pb2, task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error


async def test_list_actions_by_status_returns_only_those_in_order_across_pages(tasks: TaskServiceStub) -> None:
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="long history"))).task.id
    recorded = [(await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary=f"step {n}"))).action
                for n in range(7)]
    for action in recorded[:5]:
        await tasks.CompleteAction(pb.CompleteActionRequest(action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED))
    running = pb.ListActionsRequest(task_id=task_id, statuses=[task_pb2.ACTION_STATUS_RUNNING], page_size=1)
    first = await tasks.ListActions(running)
    running.page_token = first.next_page_token
    second = await tasks.ListActions(running)
    assert [a.summary for a in [*first.actions, *second.actions]] == ["step 5", "step 6"]
    assert second.next_page_token == ""
    both = await tasks.ListActions(pb.ListActionsRequest(task_id=task_id, statuses=[
        task_pb2.ACTION_STATUS_RUNNING, task_pb2.ACTION_STATUS_SUCCEEDED]))
    assert len(both.actions) == 7
    everything = await tasks.ListActions(pb.ListActionsRequest(task_id=task_id))
    assert len(everything.actions) == 7


async def test_a_page_token_of_another_status_filter_is_refused(tasks: TaskServiceStub) -> None:
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="two filters"))).task.id
    for n in range(3):
        await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary=f"step {n}"))
    page = await tasks.ListActions(pb.ListActionsRequest(task_id=task_id, page_size=1))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await tasks.ListActions(pb.ListActionsRequest(task_id=task_id, page_size=1, page_token=page.next_page_token,
                                                      statuses=[task_pb2.ACTION_STATUS_RUNNING]))
    assert_rpc_error(raised.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "page_token")
