"""`taskmem a2a`: taskmem's own tasks to an A2A client (the a2a-sdk's), behind the same doors as the
other front ends."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc
import httpx
import pytest

pytest.importorskip("a2a", reason="the a2a extra: pip install -e '.[a2a]'")

from a2a.client import Client, ClientCallContext, ClientConfig, create_client  # noqa: E402
from a2a.client.card_resolver import A2ACardResolver  # noqa: E402
from a2a.client.errors import A2AClientError  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError  # noqa: E402
from google.protobuf import field_mask_pb2  # noqa: E402

from taskmem.v1 import memory_service_pb2, task_pb2, task_service_pb2  # noqa: E402
from taskmem_client import TaskmemClient  # noqa: E402
from tests.a2a.agent_process import AgentProcess  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402
from tests.support.eventually import HANG_GUARD_SECONDS


async def a2a_client(url: str, key: str = "") -> Client:
    headers = {"authorization": f"Bearer {key}"} if key else {}
    return await create_client(url, ClientConfig(streaming=True, httpx_client=httpx.AsyncClient(headers=headers)))


async def grpc_a2a_client(url: str, card_key: str = "") -> Client:
    """The SDK's gRPC client, on the gRPC interface the agent card names (read with card_key)."""
    async with httpx.AsyncClient(headers={"authorization": f"Bearer {card_key}"} if card_key else {}) as http:
        card = await A2ACardResolver(http, url).get_agent_card()
    return await create_client(card, ClientConfig(streaming=True, supported_protocol_bindings=["GRPC"],
                                                  grpc_channel_factory=grpc.aio.insecure_channel))


def with_metadata(**values: str) -> ClientCallContext:
    return ClientCallContext(service_parameters={key.replace("_", "-"): value for key, value in values.items()})


async def set_status(taskmem: TaskmemClient, task_id: str, status: int) -> None:
    await taskmem.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
        task=task_pb2.Task(id=task_id, status=status), update_mask=field_mask_pb2.FieldMask(paths=["status"])))


async def test_an_a2a_client_reads_and_lists_a_taskmem_task_with_its_transcript_and_artifacts(
        front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="deploy", goal="ship it"))).task
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=created.id, role=task_pb2.MESSAGE_ROLE_USER, content="ship v2 today"))
    await taskmem.memory.RegisterArtifact(memory_service_pb2.RegisterArtifactRequest(
        task_id=created.id, type=1, path="dist/app.tar", content=b"tarball"))
    client = await a2a_client(front_end.url)

    task = await client.get_task(GetTaskRequest(id=created.id))
    assert task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert [m.parts[0].text for m in task.history] == ["ship v2 today"]
    assert [a.name for a in task.artifacts] == ["dist/app.tar"]
    listed = await client.list_tasks(ListTasksRequest(status=TaskState.TASK_STATE_SUBMITTED))
    assert created.id in [t.id for t in listed.tasks]
    with pytest.raises(TaskNotFoundError):
        await client.get_task(GetTaskRequest(id="tsk_000000000000000000000000"))


async def test_an_a2a_client_follows_a_task_until_it_ends_and_resumes_by_cursor(
        front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="index"))).task
    client = await a2a_client(front_end.url)
    stream = client.subscribe(SubscribeToTaskRequest(id=created.id)).__aiter__()
    snapshot = await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)
    assert snapshot.task.status.state == TaskState.TASK_STATE_SUBMITTED

    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=created.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="indexed 40 files"))
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_COMPLETED)
    seen = [await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS) for _ in range(3)]

    assert [r.status_update.status.state for r in seen] == [
        TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]
    assert seen[1].status_update.status.message.parts[0].text == "indexed 40 files"
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)

    # taskmem's extension: resume after a cursor an event carried (the task has ended, so only
    # a task still going can be followed; a new one shows the replay).
    again = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="again"))).task
    await set_status(taskmem, again.id, task_pb2.TASK_STATUS_EXECUTING)
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=again.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="first"))
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=again.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="second"))
    events = await taskmem.tasks.ListEvents(task_service_pb2.ListEventsRequest(task_ids=[again.id]))
    first_cursor = next(e.cursor for e in events.events if e.type == 9)  # MESSAGE_POSTED "first"
    async with httpx.AsyncClient(headers={"x-taskmem-after-cursor": str(first_cursor)}) as http:
        resumed_client = await create_client(front_end.url, ClientConfig(streaming=True, httpx_client=http))
        resumed = resumed_client.subscribe(SubscribeToTaskRequest(id=again.id)).__aiter__()
        await asyncio.wait_for(resumed.__anext__(), HANG_GUARD_SECONDS)  # the task now
        replayed = await asyncio.wait_for(resumed.__anext__(), HANG_GUARD_SECONDS)
        assert replayed.status_update.status.message.parts[0].text == "second"
        await resumed.aclose()


async def test_an_a2a_client_cancels_a_running_task(front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="long job"))).task
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    client = await a2a_client(front_end.url)

    cancelled = await client.cancel_task(CancelTaskRequest(id=created.id))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    stored = await taskmem.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=created.id))
    assert stored.task.status == task_pb2.TASK_STATUS_CANCELLED


async def test_the_agent_card_names_taskmem_and_its_three_bindings(front_end: AgentProcess) -> None:
    async with httpx.AsyncClient() as http:
        card = (await http.get(front_end.url + ".well-known/agent-card.json")).json()
    assert card["name"] == "taskmem"
    assert {i["protocolBinding"] for i in card["supportedInterfaces"]} == {"JSONRPC", "HTTP+JSON", "GRPC"}
    grpc_url = next(i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC")
    assert grpc_url.startswith("127.0.0.1:")


async def test_an_a2a_grpc_client_reads_lists_follows_and_cancels_a_taskmem_task(
        front_end: AgentProcess, taskmem: TaskmemClient) -> None:
    created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="migrate", goal="move db"))).task
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=created.id, role=task_pb2.MESSAGE_ROLE_USER, content="keep the old one for a week"))
    client = await grpc_a2a_client(front_end.url)

    task = await client.get_task(GetTaskRequest(id=created.id))
    assert task.status.state == TaskState.TASK_STATE_SUBMITTED
    assert [m.parts[0].text for m in task.history] == ["keep the old one for a week"]
    assert created.id in [t.id for t in (await client.list_tasks(ListTasksRequest())).tasks]
    with pytest.raises(TaskNotFoundError):
        await client.get_task(GetTaskRequest(id="tsk_000000000000000000000000"))

    stream = client.subscribe(SubscribeToTaskRequest(id=created.id)).__aiter__()
    assert (await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)).task.id == created.id
    await set_status(taskmem, created.id, task_pb2.TASK_STATUS_EXECUTING)
    await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
        task_id=created.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="copied 3 tables"))
    working, message = [await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS) for _ in range(2)]
    assert working.status_update.status.state == TaskState.TASK_STATE_WORKING
    assert message.status_update.status.message.parts[0].text == "copied 3 tables"

    # Resume over gRPC: the cursor goes as call metadata; only the events after it are replayed.
    after = int(working.status_update.metadata["taskmem_cursor"])
    resumed = client.subscribe(SubscribeToTaskRequest(id=created.id),
                               context=with_metadata(x_taskmem_after_cursor=str(after))).__aiter__()
    await asyncio.wait_for(resumed.__anext__(), HANG_GUARD_SECONDS)  # the task now
    replayed = await asyncio.wait_for(resumed.__anext__(), HANG_GUARD_SECONDS)
    assert replayed.status_update.status.message.parts[0].text == "copied 3 tables"
    await resumed.aclose()

    cancelled = await client.cancel_task(CancelTaskRequest(id=created.id))
    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    ended = await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)
    assert ended.status_update.status.state == TaskState.TASK_STATE_CANCELED
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)


async def test_a_foreign_host_or_origin_is_refused(front_end: AgentProcess) -> None:
    card = front_end.url + ".well-known/agent-card.json"
    async with httpx.AsyncClient() as http:
        assert (await http.get(card)).status_code == 200
        assert (await http.get(card, headers={"host": "evil.test"})).status_code == 403
        assert (await http.get(card, headers={"origin": "http://evil.test"})).status_code == 403


async def test_with_api_keys_a_caller_without_a_key_is_refused(tmp_path: Path) -> None:
    keyed = ServerProcess(tmp_path / "keys.db", "--api-key", "team-key:default")
    keyed.start()
    process = AgentProcess(keyed.address, front_end=True)
    process.start()
    try:
        async with httpx.AsyncClient() as http:
            assert (await http.get(process.url + "tasks")).status_code == 401
        async with TaskmemClient(keyed.address, token="team-key") as taskmem:
            created = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="keyed"))).task
        client = await a2a_client(process.url, key="team-key")
        assert (await client.get_task(GetTaskRequest(id=created.id))).id == created.id

        over_grpc = await grpc_a2a_client(process.url, card_key="team-key")
        with pytest.raises(A2AClientError, match="UNAUTHENTICATED"):
            await over_grpc.get_task(GetTaskRequest(id=created.id))
        with pytest.raises(A2AClientError, match="UNAUTHENTICATED"):  # a wrong key: taskmem's own refusal
            await over_grpc.get_task(GetTaskRequest(id=created.id), context=with_metadata(authorization="Bearer no"))
        keyed_call = with_metadata(authorization="Bearer team-key")
        assert (await over_grpc.get_task(GetTaskRequest(id=created.id), context=keyed_call)).id == created.id
    finally:
        process.stop()
        keyed.stop()


def test_a_non_loopback_address_needs_insecure() -> None:
    result = subprocess.run([sys.executable, "-m", "taskmem", "a2a", "--listen", "0.0.0.0:0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not a loopback address" in result.stderr
