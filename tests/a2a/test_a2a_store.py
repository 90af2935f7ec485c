"""taskmem as the store of a2a-sdk agent servers: the SDK's DefaultRequestHandler and client, two agent
server processes on one live taskmem server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

pytest.importorskip("a2a", reason="the a2a extra: pip install -e 'clients/python[a2a]'")

from a2a.client import Client, ClientConfig, create_client  # noqa: E402
from a2a.server.cluster import ConcurrentTaskModificationError, TaskVersion  # noqa: E402
from a2a.auth.user import User  # noqa: E402
from a2a.server.context import ServerCallContext  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskState,
    TaskPushNotificationConfig,
    TaskStatus,
)

from taskmem.v1 import memory_pb2, memory_service_pb2, task_pb2, task_service_pb2  # noqa: E402
from taskmem_a2a import (  # noqa: E402
    A2ATaskRecords,
    TaskmemPushNotificationConfigStore,
    TaskmemTaskEventStream,
    TaskmemTaskStore,
)
from taskmem_client import TaskmemClient  # noqa: E402
from tests.a2a.agent_process import AgentProcess  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402
from tests.support.eventually import HANG_GUARD_SECONDS


@pytest.fixture(scope="module")
def replicas(server: ServerProcess) -> Iterator[tuple[AgentProcess, AgentProcess]]:
    first, second = AgentProcess(server.address), AgentProcess(server.address)
    first.start()
    second.start()
    yield first, second
    first.stop()
    second.stop()


async def a2a_client(url: str) -> Client:
    return await create_client(url, ClientConfig(streaming=True))


def user_message(text: str, task_id: str = "", context_id: str = "") -> SendMessageRequest:
    return SendMessageRequest(message=Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER,
                                              parts=[Part(text=text)], task_id=task_id, context_id=context_id))


async def send(client: Client, request: SendMessageRequest) -> list[StreamResponse]:
    return [response async for response in client.send_message(request)]


def task_of(responses: list[StreamResponse]) -> str:
    for response in responses:
        which = response.WhichOneof("payload")
        if which == "task":
            return response.task.id
        if which in ("status_update", "artifact_update"):
            return getattr(response, which).task_id
    raise AssertionError(f"no task in {responses}")


async def taskmem_task(taskmem: TaskmemClient, a2a_id: str) -> task_pb2.Task:
    mapping = await taskmem.memory.GetKnowledge(memory_service_pb2.GetKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_FACT, key=f"a2a.task/{a2a_id}"))
    return (await taskmem.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=mapping.knowledge.value))).task


async def test_a_task_created_through_one_replica_is_read_listed_and_recorded_in_taskmem(
        replicas: tuple[AgentProcess, AgentProcess], taskmem: TaskmemClient) -> None:
    first, second = replicas
    writer, reader = await a2a_client(first.url), await a2a_client(second.url)
    context_id = uuid.uuid4().hex
    task_id = task_of(await send(writer, user_message("write the release notes", context_id=context_id)))

    task = await reader.get_task(GetTaskRequest(id=task_id))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert [a.name for a in task.artifacts] == ["answer"]
    listed = await reader.list_tasks(ListTasksRequest(context_id=context_id))
    assert [t.id for t in listed.tasks] == [task_id] and listed.total_size == 1

    stored = await taskmem_task(taskmem, task_id)
    assert stored.status == task_pb2.TASK_STATUS_COMPLETED and stored.goal == "write the release notes"
    messages = await taskmem.tasks.ListMessages(task_service_pb2.ListMessagesRequest(task_id=stored.id))
    assert [(m.role, m.content) for m in messages.messages] == [
        (task_pb2.MESSAGE_ROLE_USER, "write the release notes"),
        (task_pb2.MESSAGE_ROLE_AGENT, "working on: write the release notes"),
        (task_pb2.MESSAGE_ROLE_AGENT, "done: write the release notes")]
    artifacts = await taskmem.memory.ListArtifacts(memory_service_pb2.ListArtifactsRequest(task_id=stored.id))
    assert [(a.path, a.size_bytes) for a in artifacts.artifacts] == [
        ("a2a/answer", len(b"answer to write the release notes"))]
    progress = await taskmem.tasks.GetProgress(task_service_pb2.GetProgressRequest(task_id=stored.id))
    assert "done: write the release notes" in str(progress)


async def test_a_stream_opened_on_one_replica_sees_what_the_other_replica_writes(
        replicas: tuple[AgentProcess, AgentProcess]) -> None:
    first, second = replicas
    writer, watcher = await a2a_client(first.url), await a2a_client(second.url)
    working = writer.send_message(user_message("steps 8")).__aiter__()
    task_id = task_of([await asyncio.wait_for(working.__anext__(), HANG_GUARD_SECONDS)])

    # The second replica does not run the agent: what it streams, it reads from taskmem.
    stream = watcher.subscribe(SubscribeToTaskRequest(id=task_id)).__aiter__()
    snapshot = await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)
    seen = [response async for response in _until_final(stream)]
    await working.aclose()

    updates = [r.status_update.status.message.parts[0].text for r in seen if r.HasField("status_update")][:-1]
    every_update = ["working on: steps 8", *(f"step {n}" for n in range(1, 9))]
    # Every update written after the snapshot, once, in order.
    assert updates and updates == every_update[len(every_update) - len(updates):]
    assert snapshot.task.status.state in (TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING)
    assert [r.artifact_update.artifact.name for r in seen if r.HasField("artifact_update")] == ["answer"]
    assert seen[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def _until_final(stream: AsyncIterator[StreamResponse]) -> AsyncIterator[StreamResponse]:
    while True:
        response = await asyncio.wait_for(stream.__anext__(), HANG_GUARD_SECONDS)
        yield response
        if response.HasField("status_update") and response.status_update.status.state in (
                TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED):
            return


async def test_a_task_waiting_on_one_replica_is_cancelled_through_the_other(
        replicas: tuple[AgentProcess, AgentProcess], taskmem: TaskmemClient) -> None:
    first, second = replicas
    owner, canceller = await a2a_client(first.url), await a2a_client(second.url)
    task_id = task_of(await send(owner, user_message("ask me later")))

    cancelled = await canceller.cancel_task(CancelTaskRequest(id=task_id))

    assert cancelled.status.state == TaskState.TASK_STATE_CANCELED
    assert (await owner.get_task(GetTaskRequest(id=task_id))).status.state == TaskState.TASK_STATE_CANCELED
    assert (await taskmem_task(taskmem, task_id)).status == task_pb2.TASK_STATUS_CANCELLED


async def test_a_save_from_a_stale_version_is_refused(taskmem: TaskmemClient) -> None:
    store = TaskmemTaskStore(A2ATaskRecords(taskmem))
    other = TaskmemTaskStore(A2ATaskRecords(taskmem))
    context = ServerCallContext()
    task = Task(id=uuid.uuid4().hex, context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    first = await store.save(task, event=task, prev=None, prev_version=TaskVersion.MISSING, context=context)
    with pytest.raises(ConcurrentTaskModificationError):
        await other.save(task, event=None, prev=None, prev_version=TaskVersion.MISSING, context=context)

    working = Task()
    working.CopyFrom(task)
    working.status.state = TaskState.TASK_STATE_WORKING
    second = await other.save(working, event=None, prev=task, prev_version=first, context=context)
    assert second.is_after(first)
    with pytest.raises(ConcurrentTaskModificationError):
        await store.save(working, event=None, prev=task, prev_version=first, context=context)
    stored = await store.get(task.id, context)
    assert stored is not None and stored.version == second and stored.task.status.state == TaskState.TASK_STATE_WORKING


async def test_one_writer_saves_status_messages_one_after_another(taskmem: TaskmemClient) -> None:
    """Each status message goes to the transcript, which moves the taskmem task's etag on; the writer's
    next save must not take its own transcript post for a concurrent writer."""
    store = TaskmemTaskStore(A2ATaskRecords(taskmem))
    context = ServerCallContext()
    task = Task(id=uuid.uuid4().hex, context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_WORKING))
    version = await store.save(task, event=task, prev=None, prev_version=TaskVersion.MISSING, context=context)
    for step in range(3):
        update = Task()
        update.CopyFrom(task)
        update.status.message.CopyFrom(Message(message_id=f"step-{step}", role=Role.ROLE_AGENT,
                                               parts=[Part(text=f"step {step}")]))
        version = await store.save(update, event=None, prev=task, prev_version=version, context=context)
        task = update

    stored = await store.get(task.id, context)
    assert stored is not None and stored.version == version == TaskVersion(4)
    location = await store.records.locate(task.id, "default")
    assert location is not None
    messages = await taskmem.tasks.ListMessages(task_service_pb2.ListMessagesRequest(task_id=location.taskmem_id))
    assert [m.content for m in messages.messages] == ["step 0", "step 1", "step 2"]


async def test_a_subscription_resumes_after_a_version_and_delivers_later_writes_live(
        taskmem: TaskmemClient) -> None:
    records = A2ATaskRecords(taskmem)
    store, stream = TaskmemTaskStore(records), TaskmemTaskEventStream(records)
    context = ServerCallContext()
    task = Task(id=uuid.uuid4().hex, context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
    version = await store.save(task, event=task, prev=None, prev_version=TaskVersion.MISSING, context=context)
    after = version
    states = [TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_WORKING]
    for state in states[:2]:
        update = Task()
        update.CopyFrom(task)
        update.status.state = state
        version = await store.save(update, event=update, prev=task, prev_version=version, context=context)
        task = update

    subscription = stream.subscribe(task.id, after=after).__aiter__()
    replayed = [await asyncio.wait_for(subscription.__anext__(), HANG_GUARD_SECONDS) for _ in range(2)]
    assert [e.event.status.state for e in replayed] == states[:2]
    update = Task()
    update.CopyFrom(task)
    update.status.state = states[2]
    latest = await store.save(update, event=update, prev=task, prev_version=version, context=context)
    live = await asyncio.wait_for(subscription.__anext__(), HANG_GUARD_SECONDS)
    assert live.version == latest and live.event.status.state == states[2]
    await subscription.aclose()


def owner_context(name: str) -> ServerCallContext:
    class Named(User):
        @property
        def is_authenticated(self) -> bool:
            return True

        @property
        def user_name(self) -> str:
            return name

    return ServerCallContext(user=Named())


async def test_push_configs_and_tasks_are_scoped_to_their_owners_namespace(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "keys.db", "--api-key", "store-key:alice,bob")
    server.start()
    try:
        async with TaskmemClient(server.address, token="store-key") as client:
            records = A2ATaskRecords(client)
            store, configs = TaskmemTaskStore(records), TaskmemPushNotificationConfigStore(records)
            alice, bob = owner_context("alice"), owner_context("bob")
            task = Task(id=uuid.uuid4().hex, context_id="c", status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED))
            await store.save(task, event=task, prev=None, prev_version=TaskVersion.MISSING, context=alice)
            hook = TaskPushNotificationConfig(id="hook", url="https://example.test/hook")
            await configs.set_info(task.id, hook, alice)

            assert await store.get(task.id, bob) is None
            assert await configs.get_info(task.id, bob) == []
            assert [c.url for c in await configs.get_info(task.id, alice)] == ["https://example.test/hook"]
            assert [c.id for c in await configs.get_info_for_dispatch(task.id)] == ["hook"]
            in_alice = await client.tasks.ListTasks(task_service_pb2.ListTasksRequest(),
                                                    metadata=(("x-taskmem-namespace", "alice"),))
            assert [t.name for t in in_alice.tasks] == [f"A2A task {task.id}"]

            await configs.delete_info(task.id, bob)
            assert len(await configs.get_info(task.id, alice)) == 1
            await configs.delete_info(task.id, alice, "hook")
            assert await configs.get_info(task.id, alice) == []
            await store.delete(task.id, alice)
            assert await store.get(task.id, alice) is None
    finally:
        server.stop()
