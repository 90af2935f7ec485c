"""`taskmem a2a` SendMessage: an A2A client (the a2a-sdk's, over JSON-RPC and gRPC) creates a taskmem task by
message, then reads, lists, follows and cancels it; a message naming a task joins its transcript."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import httpx
import pytest

pytest.importorskip("a2a", reason="the a2a extra: pip install -e '.[a2a]'")

from a2a.client import Client, ClientConfig, create_client  # noqa: E402
from a2a.client.card_resolver import A2ACardResolver  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    CancelTaskRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError  # noqa: E402
from google.protobuf import field_mask_pb2  # noqa: E402

from taskmem.v1 import task_pb2, task_service_pb2, wait_pb2, wait_service_pb2  # noqa: E402
from taskmem_client import TaskmemClient  # noqa: E402
from tests.a2a.agent_process import AgentProcess  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402
from tests.support.eventually import HANG_GUARD_SECONDS

BINDINGS = ["JSONRPC", "GRPC"]


async def a2a_client(url: str, binding: str, *, streaming: bool) -> Client:
    """The SDK's client on the binding the agent card names; streaming=False sends SendMessage, True
    SendStreamingMessage (and is what SubscribeToTask needs)."""
    async with httpx.AsyncClient() as http:
        card = await A2ACardResolver(http, url).get_agent_card()
    return await create_client(card, ClientConfig(streaming=streaming, supported_protocol_bindings=[binding],
                                                  grpc_channel_factory=grpc.aio.insecure_channel))


def message(text: str, *, task_id: str = "", context_id: str = "", message_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=message_id or uuid.uuid4().hex, role=Role.ROLE_USER,
                                              parts=[Part(text=text)], task_id=task_id, context_id=context_id))


async def sent_task(client: Client, request: SendMessageRequest) -> Task:
    """The task a non-streaming SendMessage answers with."""
    (response,) = [r async for r in client.send_message(request)]
    assert response.WhichOneof("payload") == "task"
    return response.task


async def next_of(stream: AsyncIterator[StreamResponse]) -> StreamResponse:
    return await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)


async def set_status(taskmem: TaskmemClient, task_id: str, status: int) -> None:
    await taskmem.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
        task=task_pb2.Task(id=task_id, status=status), update_mask=field_mask_pb2.FieldMask(paths=["status"])))


@pytest.mark.parametrize("binding", BINDINGS)
async def test_an_a2a_client_creates_a_task_by_message_then_reads_lists_follows_and_cancels_it(
        front_end: AgentProcess, taskmem: TaskmemClient, binding: str) -> None:
    sender = await a2a_client(front_end.url, binding, streaming=False)
    context_id = f"ctx-{uuid.uuid4().hex}"

    created = await sent_task(sender, message("  Write the release notes  \nfor v2, from the changelog",
                                              context_id=context_id))

    assert created.status.state == TaskState.TASK_STATE_SUBMITTED
    assert created.context_id == context_id
    assert [(m.role, m.parts[0].text) for m in created.history] == [
        (Role.ROLE_USER, "  Write the release notes  \nfor v2, from the changelog")]
    stored = (await taskmem.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=created.id))).task
    assert (stored.name, stored.status) == ("Write the release notes", task_pb2.TASK_STATUS_PENDING)
    transcript = (await taskmem.tasks.ListMessages(task_service_pb2.ListMessagesRequest(task_id=created.id))).messages
    assert [(m.role, m.content) for m in transcript] == [
        (task_pb2.MESSAGE_ROLE_USER, "  Write the release notes  \nfor v2, from the changelog")]

    client = await a2a_client(front_end.url, binding, streaming=True)
    assert (await client.get_task(GetTaskRequest(id=created.id))).context_id == context_id
    listed = await client.list_tasks(ListTasksRequest(context_id=context_id))
    assert [t.id for t in listed.tasks] == [created.id]

    stream = client.subscribe(SubscribeToTaskRequest(id=created.id)).__aiter__()
    assert (await next_of(stream)).task.id == created.id
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=created.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="which changelog?"))
    working, asked = await next_of(stream), await next_of(stream)
    assert working.status_update.status.state == TaskState.TASK_STATE_WORKING
    assert asked.status_update.status.message.parts[0].text == "which changelog?"
    assert asked.status_update.context_id == context_id

    answered = await sent_task(sender, message("CHANGES.md", task_id=created.id, context_id=context_id))
    assert answered.id == created.id
    assert [m.parts[0].text for m in answered.history][1:] == ["which changelog?", "CHANGES.md"]
    reply = await next_of(stream)
    assert (reply.status_update.status.message.role, reply.status_update.status.message.parts[0].text) == (
        Role.ROLE_USER, "CHANGES.md")

    cancelled = await client.cancel_task(CancelTaskRequest(id=created.id))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert (await next_of(stream)).status_update.status.state == TaskState.TASK_STATE_CANCELED
    with pytest.raises(StopAsyncIteration):
        await next_of(stream)
    with pytest.raises(UnsupportedOperationError):
        await sent_task(sender, message("one more thing", task_id=created.id))


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_streamed_message_creates_a_task_and_streams_what_its_agent_writes_until_it_ends(
        front_end: AgentProcess, taskmem: TaskmemClient, binding: str) -> None:
    client = await a2a_client(front_end.url, binding, streaming=True)

    stream = client.send_message(message("index the docs")).__aiter__()
    first = await next_of(stream)
    task_id = first.task.id
    assert first.task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert first.task.context_id == task_id  # no contextId sent: the task is its own context
    await set_status(taskmem, task_id, task_pb2.TASK_STATUS_EXECUTING)
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content="indexed 12 pages"))
    await set_status(taskmem, task_id, task_pb2.TASK_STATUS_COMPLETED)

    seen = [await next_of(stream) for _ in range(3)]
    assert [r.status_update.status.state for r in seen] == [
        TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    assert seen[1].status_update.status.message.parts[0].text == "indexed 12 pages"
    with pytest.raises(StopAsyncIteration):
        await next_of(stream)


async def test_a_message_to_a_task_with_an_open_external_wait_joins_its_transcript_and_leaves_the_wait_open(
        front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="release"))).task
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    wait = (await taskmem.waits.CreateWait(wait_service_pb2.CreateWaitRequest(
        task_id=created.id, criteria="CI green on main",
        target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(resolver="CI"))))).wait
    sender = await a2a_client(front_end.url, "JSONRPC", streaming=False)

    joined = await sent_task(sender, message("any news?", task_id=created.id))

    assert joined.status.state == TaskState.TASK_STATE_WORKING  # a CI hook is not a person: no input required
    assert joined.history[-1].parts[0].text == "any news?"
    still = (await taskmem.waits.GetWait(wait_service_pb2.GetWaitRequest(wait_id=wait.id))).wait
    assert still.status == wait_pb2.WAIT_STATUS_WAITING


@pytest.mark.parametrize(("kind", "state"), [(wait_pb2.EXTERNAL_WAIT_KIND_INPUT, TaskState.TASK_STATE_INPUT_REQUIRED),
                                             (wait_pb2.EXTERNAL_WAIT_KIND_AUTH, TaskState.TASK_STATE_AUTH_REQUIRED)])
async def test_a_message_to_a_task_waiting_on_a_person_answers_the_wait(
        front_end: AgentProcess, taskmem: TaskmemClient, kind: int, state: int) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="release"))).task
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    wait = (await taskmem.waits.CreateWait(wait_service_pb2.CreateWaitRequest(
        task_id=created.id, target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(
            resolver="release manager", kind=kind, question="Ship today?"))))).wait  # type: ignore[arg-type]
    sender = await a2a_client(front_end.url, "GRPC", streaming=False)
    asked = await sender.get_task(GetTaskRequest(id=created.id))
    assert asked.status.state == state
    assert "Ship today?" in asked.history[-1].parts[0].text and asked.history[-1].role == Role.ROLE_AGENT

    answered = await sent_task(sender, message("yes, ship it", task_id=created.id))

    assert answered.status.state == TaskState.TASK_STATE_WORKING
    word = "Input" if kind == wait_pb2.EXTERNAL_WAIT_KIND_INPUT else "Auth"
    assert answered.history[-1].parts[0].text == f"[{word} received] yes, ship it"
    assert answered.history[-1].role == Role.ROLE_USER
    ended = (await taskmem.waits.GetWait(wait_service_pb2.GetWaitRequest(wait_id=wait.id))).wait
    assert (ended.status, ended.result) == (wait_pb2.WAIT_STATUS_RESOLVED, "yes, ship it")


async def test_a_message_sent_twice_creates_one_task_and_one_transcript_line_and_its_id_is_not_reused(
        front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    sender = await a2a_client(front_end.url, "GRPC", streaming=False)
    request = message("rotate the keys", message_id=uuid.uuid4().hex)

    first, retried = await sent_task(sender, request), await sent_task(sender, request)

    assert retried.id == first.id
    assert [m.parts[0].text for m in retried.history] == ["rotate the keys"]
    with pytest.raises(InvalidParamsError):  # one message id, another message
        await sent_task(sender, message("rotate the certificates", message_id=request.message.message_id))


async def test_a_message_may_carry_the_new_tasks_push_config(front_end: AgentProcess) -> None:
    sender = await a2a_client(front_end.url, "JSONRPC", streaming=False)
    request = message("nightly report")
    request.configuration.CopyFrom(SendMessageConfiguration(
        task_push_notification_config=TaskPushNotificationConfig(url="http://127.0.0.1:9/hook")))

    created = await sent_task(sender, request)

    config = await sender.get_task_push_notification_config(
        GetTaskPushNotificationConfigRequest(task_id=created.id, id=created.id))
    assert config.url == "http://127.0.0.1:9/hook"


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_message_to_an_unknown_task_or_another_context_is_refused(
        front_end: AgentProcess, binding: str) -> None:
    sender = await a2a_client(front_end.url, binding, streaming=False)
    created = await sent_task(sender, message("tidy the backlog", context_id="sprint-7"))

    with pytest.raises(TaskNotFoundError):
        await sent_task(sender, message("hello", task_id="tsk_000000000000000000000000"))
    with pytest.raises(InvalidParamsError):
        await sent_task(sender, message("hello", task_id=created.id, context_id="sprint-8"))
    with pytest.raises(InvalidParamsError):
        await sent_task(sender, SendMessageRequest(message=Message(message_id=uuid.uuid4().hex,
                                                                   role=Role.ROLE_USER)))


async def test_a_message_creates_the_task_in_the_namespace_the_callers_key_acts_in(tmp_path: Path) -> None:
    keyed = ServerProcess(tmp_path / "keys.db", "--api-key", "alice-key:alice", "--api-key", "bob-key:bob")
    keyed.start()
    process = AgentProcess(keyed.address, front_end=True)
    process.start()
    try:
        async with httpx.AsyncClient(headers={"authorization": "Bearer alice-key"}) as alice_http:
            alice = await create_client(process.url, ClientConfig(streaming=False, httpx_client=alice_http))
            created = await sent_task(alice, message("alice's chores"))
        async with TaskmemClient(keyed.address, token="alice-key") as taskmem:
            stored = (await taskmem.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=created.id))).task
            assert stored.namespace == "alice"
        async with httpx.AsyncClient(headers={"authorization": "Bearer bob-key"}) as bob_http:
            bob = await create_client(process.url, ClientConfig(streaming=False, httpx_client=bob_http))
            with pytest.raises(TaskNotFoundError):
                await bob.get_task(GetTaskRequest(id=created.id))
            with pytest.raises(TaskNotFoundError):
                await sent_task(bob, message("mine now", task_id=created.id))
    finally:
        process.stop()
        keyed.stop()
