"""Every event names the key (its id, never its secret) and the agent the caller named; events filter by them;
a task's state history says who changed what, in words."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from google.protobuf import json_format

from taskmem.v1 import state_service_pb2 as spb, task_pb2, task_service_pb2 as pb, wait_pb2, wait_service_pb2 as wpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.key_files import TEAM_KEYS, bearer, secret, write_keys
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

# A stream that never ends fails the test here instead of hanging the suite.


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("audit")
    write_keys(directory / "keys.yaml", TEAM_KEYS)
    server = ServerProcess(directory / "t.db", "--keys-file", str(directory / "keys.yaml"), "--embedding-backend", "none")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def channel(keyed: ServerProcess) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(keyed.address) as opened:
        yield opened


async def test_every_event_names_the_key_id_and_agent_and_never_the_secret(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    task = (await tasks.CreateTask(pb.CreateTaskRequest(name="audited"), metadata=bearer("agent", "planner-1"))).task
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task.id, content="hello", role=task_pb2.MESSAGE_ROLE_AGENT),
                            metadata=bearer("ops", "ops-console"))
    events = (await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task.id]), metadata=bearer("dash"))).events
    assert [(e.type, e.key_id, e.agent_id) for e in events] == [
        (1, "agent", "planner-1"), (9, "ops", "ops-console")]  # TASK_CREATED, MESSAGE_POSTED
    for event in events:
        text = json_format.MessageToJson(event)
        assert secret("agent") not in text and secret("ops") not in text


async def test_list_events_filters_by_key_and_by_agent(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    task = (await tasks.CreateTask(pb.CreateTaskRequest(name="filtered"), metadata=bearer("agent", "a-1"))).task
    for key_id, agent in (("agent", "a-2"), ("ops", "a-1"), ("ops", "")):
        await tasks.PostMessage(pb.PostMessageRequest(task_id=task.id, content=f"{key_id} {agent}",
                                                      role=task_pb2.MESSAGE_ROLE_AGENT), metadata=bearer(key_id, agent))

    async def listed(**filters: list[str]) -> list[tuple[str, str]]:
        reply = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task.id], **filters), metadata=bearer("dash"))
        return [(event.key_id, event.agent_id) for event in reply.events]

    assert await listed(key_ids=["ops"]) == [("ops", "a-1"), ("ops", "")]
    assert await listed(agent_ids=["a-1"]) == [("agent", "a-1"), ("ops", "a-1")]
    assert await listed(key_ids=["agent"], agent_ids=["a-2"]) == [("agent", "a-2")]
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await tasks.ListEvents(pb.ListEventsRequest(key_ids=[""]), metadata=bearer("dash"))
    assert_rpc_error(raised.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "key_ids")


async def test_subscribe_events_filters_by_key_and_agent_live(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    task = (await tasks.CreateTask(pb.CreateTaskRequest(name="followed"), metadata=bearer("agent"))).task
    stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[task.id], key_ids=["ops"], agent_ids=["bot"],
                                                             after_cursor=0), metadata=bearer("dash"))
    for key_id, agent in (("agent", "bot"), ("ops", "other"), ("ops", "bot")):
        await tasks.PostMessage(pb.PostMessageRequest(task_id=task.id, content=f"{key_id} {agent}",
                                                      role=task_pb2.MESSAGE_ROLE_AGENT), metadata=bearer(key_id, agent))
    first = await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
    stream.cancel()
    assert (first.event.key_id, first.event.agent_id, first.event.payload["content"]) == ("ops", "bot", "ops bot")


async def test_the_state_history_says_who_changed_what_in_words(channel: grpc.aio.Channel) -> None:
    tasks, state, waits = TaskServiceStub(channel), StateServiceStub(channel), WaitServiceStub(channel)
    plan = [task_pb2.PlanItemSpec(id="build", title="Build the image"), task_pb2.PlanItemSpec(id="ship", title="Ship it")]
    task = (await tasks.CreateTask(pb.CreateTaskRequest(name="Deploy", plan=plan), metadata=bearer("agent"))).task
    old = await state.AddDecision(spb.AddDecisionRequest(task_id=task.id, text="Use Postgres for the queue"),
                                  metadata=bearer("agent", "planner"))
    new = await state.AddDecision(spb.AddDecisionRequest(task_id=task.id, text="Use Redis streams for the queue",
                                                         supersedes=old.item.uid), metadata=bearer("ops"))
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.id, item_id="build",
                                                        status=task_pb2.PLAN_ITEM_STATUS_COMPLETED), metadata=bearer("agent"))
    target = wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())
    wait = (await waits.CreateWait(wpb.CreateWaitRequest(task_id=task.id, criteria="approval", target=target),
                                   metadata=bearer("agent"))).wait
    await waits.ResolveWait(wpb.ResolveWaitRequest(wait_id=wait.id, result="approved"), metadata=bearer("ops"))

    versions = (await state.GetTaskStateHistory(spb.GetTaskStateHistoryRequest(task_id=task.id),
                                                metadata=bearer("dash"))).versions
    said = [version.description for version in versions]
    assert (f"decision {new.item.uid} 'Use Redis streams for the queue' replaces {old.item.uid}"
            f" 'Use Postgres for the queue' by key ops") in said, said
    assert f"decision {old.item.uid} 'Use Postgres for the queue' added by key agent (agent planner)" in said, said
    assert "step 1 'Build the image' completed by key agent" in said, said
    assert f"wait {wait.id} resolved by key ops" in said, said
    assert "task 'Deploy' created by key agent" in said, said
    resolved = next(version for version in versions if version.description.startswith(f"wait {wait.id} resolved"))
    assert (resolved.key_id, resolved.change) == ("ops", "EVENT_TYPE_WAIT_RESOLVED")
