"""The Python client (clients/python, taskmem_client) end to end against a live server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import event_pb2, memory_pb2, memory_service_pb2, state_service_pb2, task_pb2, wait_pb2, wait_service_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem_client import NO_RETRY, RetryPolicy, TaskmemClient, TaskmemError
from tests.clients.lossy_proxy import LossyProxy
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS, eventually


async def task_count(address: str) -> int:
    async with TaskmemClient(address, retry=NO_RETRY) as direct:
        return len((await direct.tasks.ListTasks(pb.ListTasksRequest())).tasks)


@pytest.fixture
async def client(server: ServerProcess) -> AsyncIterator[TaskmemClient]:
    async with TaskmemClient(server.address, timeout=HANG_GUARD_SECONDS) as opened:
        yield opened


@pytest.fixture
async def proxy(fresh_server: ServerProcess) -> AsyncIterator[LossyProxy]:
    fresh_server.start()
    lossy = LossyProxy(fresh_server.address)
    await lossy.start()
    yield lossy
    await lossy.close()


async def test_task_wait_and_state_services_answer_through_their_typed_stubs(client: TaskmemClient) -> None:
    created = await client.tasks.CreateTask(pb.CreateTaskRequest(
        name="deploy", plan=[task_pb2.PlanItemSpec(id="build", title="Build the image")]))
    assert created.task.status == task_pb2.TASK_STATUS_PENDING

    wait = await client.waits.CreateWait(wait_service_pb2.CreateWaitRequest(
        task_id=created.task.id, criteria="approval", target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())))
    resolved = await client.waits.ResolveWait(wait_service_pb2.ResolveWaitRequest(
        wait_id=wait.wait.id, result="approved by alex"))
    assert resolved.wait.status == wait_pb2.WAIT_STATUS_RESOLVED

    state = await client.state.GetTaskState(state_service_pb2.GetTaskStateRequest(task_id=created.task.id))
    assert f"id: {created.task.id}" in state.yaml and "- id: build" in state.yaml


async def test_the_memory_service_answers_through_its_typed_stub(client: TaskmemClient) -> None:
    upserted = await client.memory.UpsertKnowledge(memory_service_pb2.UpsertKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_FACT, key="python-client.deploy-target", value="staging"))
    fetched = await client.memory.GetKnowledge(memory_service_pb2.GetKnowledgeRequest(id=upserted.knowledge.id))
    assert fetched.knowledge.value == "staging"


async def test_an_empty_request_id_is_filled_without_changing_the_callers_request(client: TaskmemClient) -> None:
    request = pb.CreateTaskRequest(name="report")
    first = await client.tasks.CreateTask(request)
    second = await client.tasks.CreateTask(request)
    assert request.request_id == ""
    assert first.task.id != second.task.id  # each call is its own write, with its own id


async def test_a_request_id_given_by_the_caller_makes_a_repeat_return_the_first_result(client: TaskmemClient) -> None:
    request = pb.CreateTaskRequest(name="report", request_id="orchestrator-run-7")
    first = await client.tasks.CreateTask(request)
    again = await client.tasks.CreateTask(request)
    assert again.task.id == first.task.id


async def test_a_bad_field_raises_invalid_argument_with_its_reason_and_field(client: TaskmemClient) -> None:
    with pytest.raises(TaskmemError) as raised:
        await client.tasks.CreateTask(pb.CreateTaskRequest(
            name="deploy", plan=[task_pb2.PlanItemSpec(id="push", title="Push", depends_on=["build"])]))
    error = raised.value
    assert isinstance(error, grpc.aio.AioRpcError)
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.reason == "ERROR_REASON_INVALID_FIELD" or error.reason.startswith("ERROR_REASON_PLAN")
    assert error.field is not None and error.field.startswith("plan[0]")


async def test_an_unknown_task_raises_not_found_without_retrying(client: TaskmemClient, server: ServerProcess) -> None:
    retries: list[grpc.StatusCode] = []
    async with TaskmemClient(server.address, retry=RetryPolicy(on_retry=lambda e, n, s: retries.append(e.code()))) as c:
        with pytest.raises(TaskmemError) as raised:
            await c.tasks.GetTask(pb.GetTaskRequest(task_id="tsk_000000000000000000000000"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND
    assert raised.value.reason == "ERROR_REASON_NOT_FOUND"
    assert retries == []


async def test_a_retry_after_a_lost_reply_across_a_server_restart_writes_exactly_one_row(
        fresh_server: ServerProcess, proxy: LossyProxy) -> None:
    retries: list[grpc.StatusCode] = []
    # Attempts enough to outlast the restart however loaded the machine (the default 8 give up after ~7 s); the
    # hang guard's deadline bounds the call.
    policy = RetryPolicy(attempts=1000, on_retry=lambda error, attempt, pause: retries.append(error.code()))
    async with TaskmemClient(proxy.address, retry=policy, timeout=HANG_GUARD_SECONDS) as client:
        await client.tasks.ListTasks(pb.ListTasksRequest())  # the connection is up
        proxy.lose_replies()
        creating = asyncio.ensure_future(client.tasks.CreateTask(pb.CreateTaskRequest(name="deploy once")))
        # The first attempt commits on the server, but its reply is lost on the way back.
        async def committed() -> bool:
            return await task_count(fresh_server.address) == 1
        await eventually(committed, "the first attempt committed", interval=0.02)
        assert not creating.done()
        await asyncio.to_thread(fresh_server.restart)  # drops the connection: the client retries
        created = await creating
        listed = await client.tasks.ListTasks(pb.ListTasksRequest())
    assert [task.id for task in listed.tasks] == [created.task.id]
    assert retries and set(retries) <= {grpc.StatusCode.UNAVAILABLE}


async def test_a_call_made_while_the_server_is_down_succeeds_once_it_is_back(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    # Attempts enough to outlast a start-up on a loaded machine (the default 8 give up after ~7 s): the
    # behaviour is that the call lands once the server is back, however long its start-up takes; the 120 s
    # deadline is a hang guard only (a start-up under a load average of 26 outlasted 30 s).
    async with TaskmemClient(address, timeout=120, retry=RetryPolicy(attempts=1000)) as client:
        await client.tasks.ListTasks(pb.ListTasksRequest())
        fresh_server.stop()
        creating = asyncio.ensure_future(client.tasks.CreateTask(pb.CreateTaskRequest(name="after restart")))
        await asyncio.sleep(0.5)
        await asyncio.to_thread(fresh_server.start)
        created = await creating
    assert await task_count(address) == 1
    assert created.task.name == "after restart"


async def test_a_call_whose_deadline_expires_raises_deadline_exceeded(proxy: LossyProxy) -> None:
    retries: list[int] = []
    policy = RetryPolicy(on_retry=lambda error, attempt, pause: retries.append(attempt))
    async with TaskmemClient(proxy.address, timeout=30, retry=policy) as client:
        await client.tasks.ListTasks(pb.ListTasksRequest())
        proxy.lose_replies()
        started = time.monotonic()
        with pytest.raises(TaskmemError) as raised:
            await client.tasks.ListTasks(pb.ListTasksRequest(), timeout=0.5)
        elapsed = time.monotonic() - started
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # The deadline covers every attempt: none follows the one it ended. Not sooner than the deadline (a busy
    # machine can only make it later, so no upper bound).
    assert retries == [] and elapsed > 0.4


async def test_the_client_timeout_is_the_default_deadline_of_unary_calls(proxy: LossyProxy) -> None:
    async with TaskmemClient(proxy.address, timeout=0.5) as client:
        await client.tasks.ListTasks(pb.ListTasksRequest(), timeout=30)  # connecting may take a busy machine longer
        proxy.lose_replies()
        with pytest.raises(TaskmemError) as raised:
            await client.tasks.GetTask(pb.GetTaskRequest(task_id="tsk_000000000000000000000000"))
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_a_stream_given_a_timeout_ends_with_deadline_exceeded(client: TaskmemClient) -> None:
    created = await client.tasks.CreateTask(pb.CreateTaskRequest(name="tail"))
    action = await client.tasks.RecordAction(pb.RecordActionRequest(task_id=created.task.id, summary="build"))
    with pytest.raises(TaskmemError) as raised:
        async for _ in client.tasks.TailActionLog(pb.TailActionLogRequest(action_id=action.action.id), timeout=0.5):
            pass
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED


async def test_a_missing_or_wrong_token_is_unauthenticated_and_not_retried(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "t.db", "--api-key", "alpha-key:alpha,beta")
    address = server.start()
    retries: list[grpc.StatusCode] = []
    policy = RetryPolicy(on_retry=lambda error, attempt, pause: retries.append(error.code()))
    try:
        for token in (None, "wrong-key"):
            async with TaskmemClient(address, token=token, retry=policy) as client:
                with pytest.raises(TaskmemError) as raised:
                    await client.tasks.CreateTask(pb.CreateTaskRequest(name="x"))
                assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
                assert raised.value.reason == "ERROR_REASON_UNAUTHENTICATED"
                with pytest.raises(TaskmemError) as raised:
                    async for _ in client.subscribe():
                        pass
                assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert retries == []
        async with TaskmemClient(address, token="alpha-key", namespace="beta") as client:
            created = await client.tasks.CreateTask(pb.CreateTaskRequest(name="x"))
            assert created.task.namespace == "beta"
    finally:
        server.stop()


def test_a_token_is_not_sent_in_plaintext_to_a_remote_host() -> None:
    with pytest.raises(ValueError, match="plaintext"):
        TaskmemClient("taskmem.example.com:50051", token="key")


async def test_subscribe_replays_history_then_streams_live_events(client: TaskmemClient) -> None:
    created = await client.tasks.CreateTask(pb.CreateTaskRequest(name="watched"))
    seen: list[event_pb2.Event] = []

    async def follow() -> None:
        async for event in client.subscribe(task_ids=[created.task.id]):
            seen.append(event)
            if event.type == event_pb2.EVENT_TYPE_MESSAGE_POSTED:
                return

    following = asyncio.ensure_future(follow())
    await eventually(lambda: len(seen) == 1, "the first event followed")
    assert seen[0].type == event_pb2.EVENT_TYPE_TASK_CREATED
    await client.tasks.PostMessage(pb.PostMessageRequest(task_id=created.task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="hello"))
    await asyncio.wait_for(following, HANG_GUARD_SECONDS)
    assert [e.type for e in seen] == [event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_MESSAGE_POSTED]


async def test_subscribe_resumes_across_a_server_restart_delivering_each_event_once(
        fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    reconnects: list[int] = []
    async with TaskmemClient(address) as client:
        created = await client.tasks.CreateTask(pb.CreateTaskRequest(name="long job"))
        cursors: list[int] = []

        async def follow() -> None:
            async for event in client.subscribe(task_ids=[created.task.id], initial_backoff=0.05,
                                                on_reconnect=lambda error, pause, attempt: reconnects.append(attempt)):
                cursors.append(event.cursor)
                if len(cursors) == 11:
                    return

        following = asyncio.ensure_future(follow())
        for n in range(5):
            await client.tasks.PostMessage(pb.PostMessageRequest(task_id=created.task.id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                               content=f"before {n}"))
        await eventually(lambda: len(cursors) == 6, "six events followed")
        await asyncio.to_thread(fresh_server.restart)
        for n in range(5):
            await client.tasks.PostMessage(pb.PostMessageRequest(task_id=created.task.id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                               content=f"after {n}"))
        await asyncio.wait_for(following, HANG_GUARD_SECONDS)
    assert cursors == sorted(set(cursors)) and len(cursors) == 11
    assert reconnects


async def test_subscribe_with_an_invalid_filter_raises_instead_of_reconnecting(client: TaskmemClient) -> None:
    with pytest.raises(TaskmemError) as raised:
        async for _ in client.subscribe(after_cursor=-5):
            pass
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.field == "after_cursor"


async def test_closing_the_client_ends_a_subscription_quietly(server: ServerProcess) -> None:
    client = TaskmemClient(server.address)
    ended = asyncio.Event()

    async def follow() -> None:
        async for _ in client.subscribe(after_cursor=-1):
            pass
        ended.set()

    following = asyncio.ensure_future(follow())
    await asyncio.sleep(0.3)
    await client.close()
    await asyncio.wait_for(following, HANG_GUARD_SECONDS)
    assert ended.is_set()


# --- many agents on one plan: claim_next and the lease keeper ----------------------------------

async def test_claim_next_hands_out_ready_items_waits_for_held_ones_and_ends_when_drained(client: TaskmemClient) -> None:
    task_id = (await client.tasks.CreateTask(pb.CreateTaskRequest(name="shared", plan=[
        task_pb2.PlanItemSpec(id="build", title="Build"), task_pb2.PlanItemSpec(id="push", title="Push",
                                                                               depends_on=["build"])]))).task.id
    first = await client.claim_next(task_id, "agent-1", lease=5)
    assert first is not None and (first.item.id, first.holder_id, first.task_id) == ("build", "agent-1", task_id)
    assert await client.claim_next(task_id, "agent-2", wait=False) is None  # push waits on build

    async def finish_build() -> None:
        await asyncio.sleep(0.3)
        await client.tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
            task_id=task_id, item_id="build", holder_id="agent-1", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))

    finishing = asyncio.create_task(finish_build())
    second = await client.claim_next(task_id, "agent-2", poll=0.05)  # waits until build is done
    await finishing
    assert second is not None and second.item.id == "push"
    await client.tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
        task_id=task_id, item_id="push", holder_id="agent-2", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    assert await client.claim_next(task_id, "agent-3") is None


async def test_the_lease_keeper_renews_past_the_lease_and_reports_loss_naming_the_new_holder(
        client: TaskmemClient) -> None:
    task_id = (await client.tasks.CreateTask(pb.CreateTaskRequest(name="kept", plan=[
        task_pb2.PlanItemSpec(id="long", title="A long step")]))).task.id
    # A lease of 3 s, renewed every second: a renewal must be two seconds late before it lapses.
    claimed = await client.claim_next(task_id, "agent-1", lease=3)
    assert claimed is not None
    losses: list[str | None] = []
    async with client.keep_lease(claimed, on_lost=lambda keeper: losses.append(keeper.lost_to)) as lease:
        await asyncio.sleep(7.5)  # two and a half leases: held only because it is renewed
        assert not lease.lost.is_set() and lease.expire_time > time.time()
        assert await client.claim_next(task_id, "agent-2", wait=False) is None
        # Just after a renewal (a third of a lease before the next), an operator puts the item back by hand and
        # another agent takes it: the keeper's next renewal is refused, naming that agent.
        renewed = lease.expire_time
        await eventually(lambda: lease.expire_time != renewed, "the next renewal")
        await client.tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
            task_id=task_id, item_id="long", status=task_pb2.PLAN_ITEM_STATUS_PENDING))
        taken = await client.claim_next(task_id, "agent-2", lease=30)
        assert taken is not None and taken.item.id == "long"
        await asyncio.wait_for(lease.lost.wait(), HANG_GUARD_SECONDS)
    assert lease.lost_to == "agent-2" and losses == ["agent-2"]


async def test_leaving_the_keeper_with_an_error_gives_the_item_back(client: TaskmemClient) -> None:
    task_id = (await client.tasks.CreateTask(pb.CreateTaskRequest(name="given back", plan=[
        task_pb2.PlanItemSpec(id="flaky", title="A flaky step")]))).task.id
    claimed = await client.claim_next(task_id, "agent-1")
    assert claimed is not None
    with pytest.raises(RuntimeError):
        async with client.keep_lease(claimed):
            raise RuntimeError("the agent's tool crashed")
    again = await client.claim_next(task_id, "agent-2", wait=False)
    assert again is not None and again.item.id == "flaky"
