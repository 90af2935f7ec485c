"""The Python client's helpers for asking a person (issue 28, point 2), against a live server: ask_person opens
a wait of kind INPUT or AUTH, answer_of returns how it ended, across a server restart."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from taskmem.v1 import task_pb2, wait_pb2, wait_service_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem_client import TaskmemClient
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[TaskmemClient]:
    async with TaskmemClient(server.address, timeout=HANG_GUARD_SECONDS) as opened:
        yield opened


async def _executing(client: TaskmemClient, *items: task_pb2.PlanItemSpec) -> str:
    task_id = (await client.tasks.CreateTask(pb.CreateTaskRequest(name="asks", plan=list(items)))).task.id
    await client.tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING),
                                                       update_mask={"paths": ["status"]}))
    return task_id


async def test_ask_person_puts_the_task_in_input_required_and_answer_of_returns_the_answer(client: TaskmemClient) -> None:
    task_id = await _executing(client)
    asked = await client.ask_person(task_id, "Which region?", asked_of="alex", timeout=60)
    assert asked.target.external.kind == wait_pb2.EXTERNAL_WAIT_KIND_INPUT and asked.HasField("timeout")
    task = (await client.tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).task
    assert task.status == task_pb2.TASK_STATUS_INPUT_REQUIRED

    answering = asyncio.create_task(client.answer_of(asked.id))
    await asyncio.sleep(0.2)
    assert not answering.done()  # nobody has answered yet
    await client.waits.ResolveWait(wait_service_pb2.ResolveWaitRequest(wait_id=asked.id, result="eu-west-1"))
    answer = await asyncio.wait_for(answering, HANG_GUARD_SECONDS)
    assert answer.given and not answer.refused and answer.text == "eu-west-1"


async def test_an_authorisation_for_one_item_can_be_refused(client: TaskmemClient) -> None:
    task_id = await _executing(client, task_pb2.PlanItemSpec(id="sign", title="Sign the release"))
    asked = await client.ask_person(task_id, "Unlock the signing key", auth=True, plan_item_id="sign")
    plan = (await client.tasks.GetPlan(pb.GetPlanRequest(task_id=task_id))).plan
    assert plan.items[0].status == task_pb2.PLAN_ITEM_STATUS_AUTH_REQUIRED
    await client.waits.ResolveWait(wait_service_pb2.ResolveWaitRequest(wait_id=asked.id, result="not today",
                                                                       status=wait_pb2.WAIT_STATUS_FAILED))
    answer = await client.answer_of(asked.id)
    assert answer.refused and not answer.given and answer.text == "not today"


async def test_answer_of_follows_the_wait_across_a_server_restart(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    async with TaskmemClient(fresh_server.address, timeout=HANG_GUARD_SECONDS) as client:
        task_id = await _executing(client)
        asked = await client.ask_person(task_id, "Go ahead?")
        answering = asyncio.create_task(client.answer_of(asked.id))
        await asyncio.sleep(0.2)
        fresh_server.stop()
        fresh_server.start()  # the same port and database
        await client.waits.ResolveWait(wait_service_pb2.ResolveWaitRequest(wait_id=asked.id, result="yes"))
        answer = await asyncio.wait_for(answering, HANG_GUARD_SECONDS)
        assert answer.given and answer.text == "yes"
