"""Keys scoped to tasks (created by the key, given by id, or carrying a label) read and write only those, and a
refusal tells nothing about whether another task exists, in this namespace or another."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import struct_pb2

from taskmem.v1 import task_pb2, task_service_pb2 as pb, wait_pb2, wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.key_files import TEAM_KEYS, bearer, write_keys
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.server_process import ServerProcess

MISSING_TASK = "tsk_" + "0" * 24


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("scoped")
    write_keys(directory / "keys.yaml", TEAM_KEYS)
    server = ServerProcess(directory / "t.db", "--keys-file", str(directory / "keys.yaml"), "--embedding-backend", "none")
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def tasks(keyed: ServerProcess) -> AsyncIterator[TaskServiceStub]:
    async with grpc.aio.insecure_channel(keyed.address) as channel:
        yield TaskServiceStub(channel)


async def refusal(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


def labelled(*labels: str) -> struct_pb2.Struct:
    metadata = struct_pb2.Struct()
    metadata.update({"labels": list(labels)})
    return metadata


async def test_a_key_scoped_to_its_own_tasks_reads_and_writes_them_and_no_other(tasks: TaskServiceStub) -> None:
    mine = (await tasks.CreateTask(pb.CreateTaskRequest(name="mine"), metadata=bearer("own"))).task
    theirs = (await tasks.CreateTask(pb.CreateTaskRequest(name="theirs"), metadata=bearer("agent"))).task
    assert (await tasks.GetTask(pb.GetTaskRequest(task_id=mine.id), metadata=bearer("own"))).task.id == mine.id
    await tasks.PostMessage(pb.PostMessageRequest(task_id=mine.id, content="working", role=task_pb2.MESSAGE_ROLE_AGENT),
                            metadata=bearer("own"))
    error = await refusal(tasks.GetTask(pb.GetTaskRequest(task_id=theirs.id), metadata=bearer("own")))
    assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")
    error = await refusal(tasks.PostMessage(pb.PostMessageRequest(
        task_id=theirs.id, content="not mine", role=task_pb2.MESSAGE_ROLE_AGENT), metadata=bearer("own")))
    assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")
    listed = await tasks.ListTasks(pb.ListTasksRequest(page_size=500), metadata=bearer("own"))
    assert mine.id in {task.id for task in listed.tasks} and theirs.id not in {task.id for task in listed.tasks}


async def test_another_namespaces_task_and_a_missing_one_get_the_same_refusal(tasks: TaskServiceStub) -> None:
    in_alpha = (await tasks.CreateTask(pb.CreateTaskRequest(name="alpha's"), metadata=bearer("agent"))).task
    in_beta = (await tasks.CreateTask(pb.CreateTaskRequest(name="beta's"), metadata=bearer("other"))).task
    answers = []
    for task_id in (in_alpha.id, in_beta.id, MISSING_TASK):
        error = await refusal(tasks.GetTask(pb.GetTaskRequest(task_id=task_id), metadata=bearer("own")))
        info = error_info(error)
        answers.append((error.code(), info.reason, (error.details() or "").replace(task_id, "<id>"),
                        {key: value.replace(task_id, "<id>") for key, value in info.metadata.items()}))
    assert answers[0] == answers[1] == answers[2], answers
    assert answers[0][0] == grpc.StatusCode.PERMISSION_DENIED
    # An unscoped key of alpha: another namespace's task and a missing one are both NOT_FOUND, as before.
    for task_id in (in_beta.id, MISSING_TASK):
        error = await refusal(tasks.GetTask(pb.GetTaskRequest(task_id=task_id), metadata=bearer("agent")))
        assert_rpc_error(error, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


async def test_a_label_scoped_key_sees_the_tasks_carrying_its_label_only(tasks: TaskServiceStub) -> None:
    build = (await tasks.CreateTask(pb.CreateTaskRequest(name="nightly build", metadata=labelled("build")),
                                    metadata=bearer("agent"))).task
    other = (await tasks.CreateTask(pb.CreateTaskRequest(name="docs", metadata=labelled("docs")),
                                    metadata=bearer("agent"))).task
    assert (await tasks.GetTask(pb.GetTaskRequest(task_id=build.id), metadata=bearer("builds"))).task.id == build.id
    error = await refusal(tasks.GetTask(pb.GetTaskRequest(task_id=other.id), metadata=bearer("builds")))
    assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")
    listed = {task.id for task in (await tasks.ListTasks(pb.ListTasksRequest(page_size=1),
                                                          metadata=bearer("builds"))).tasks}
    assert listed == {build.id}  # the page is filled past the tasks it may not see


async def test_a_scoped_keys_events_are_those_of_its_tasks_and_namespace_wide_calls_are_refused(
        tasks: TaskServiceStub) -> None:
    mine = (await tasks.CreateTask(pb.CreateTaskRequest(name="events of mine"), metadata=bearer("own"))).task
    theirs = (await tasks.CreateTask(pb.CreateTaskRequest(name="events of theirs"), metadata=bearer("agent"))).task
    events = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[mine.id]), metadata=bearer("own"))
    assert [event.task_id for event in events.events] == [mine.id]
    for task_ids in ([], [theirs.id], [mine.id, theirs.id]):
        error = await refusal(tasks.ListEvents(pb.ListEventsRequest(task_ids=task_ids), metadata=bearer("own")))
        assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")
    stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[theirs.id]), metadata=bearer("own"))
    error = await refusal(stream.read())
    assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")


async def test_actions_and_waits_of_another_task_are_refused_like_missing_ones(keyed: ServerProcess,
                                                                               tasks: TaskServiceStub) -> None:
    theirs = (await tasks.CreateTask(pb.CreateTaskRequest(name="with an action"), metadata=bearer("agent"))).task
    action = (await tasks.RecordAction(pb.RecordActionRequest(
        task_id=theirs.id, type=task_pb2.ACTION_TYPE_TOOL, summary="run", status=task_pb2.ACTION_STATUS_RUNNING),
        metadata=bearer("agent"))).action
    complete = pb.CompleteActionRequest(status=task_pb2.ACTION_STATUS_SUCCEEDED)
    answers = []
    for action_id in (action.id, "act_" + "0" * 24):
        complete.action_id = action_id
        error = await refusal(tasks.CompleteAction(complete, metadata=bearer("own")))
        answers.append((error.code(), error_info(error).reason, (error.details() or "").replace(action_id, "<id>")))
    assert answers[0] == answers[1] and answers[0][1] == "ERROR_REASON_TASK_DENIED", answers
    async with grpc.aio.insecure_channel(keyed.address) as channel:
        waits = WaitServiceStub(channel)
        target = wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())
        wait = (await waits.CreateWait(wpb.CreateWaitRequest(task_id=theirs.id, criteria="approval", target=target),
                                       metadata=bearer("agent"))).wait
        error = await refusal(waits.GetWait(wpb.GetWaitRequest(wait_id=wait.id), metadata=bearer("own")))
        assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")


async def test_a_key_scoped_to_labels_may_create_only_tasks_carrying_one(tmp_path: Path) -> None:
    keys = {"labeller": {"role": "writer", "namespaces": ["alpha"], "tasks": {"labels": ["build"]}}}
    write_keys(tmp_path / "keys.yaml", keys)
    server = ServerProcess(tmp_path / "t.db", "--keys-file", str(tmp_path / "keys.yaml"), "--embedding-backend", "none")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks = TaskServiceStub(channel)
            error = await refusal(tasks.CreateTask(pb.CreateTaskRequest(name="unlabelled"), metadata=bearer("labeller")))
            assert_rpc_error(error, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_TASK_DENIED")
            created = await tasks.CreateTask(pb.CreateTaskRequest(name="labelled", metadata=labelled("build")),
                                             metadata=bearer("labeller"))
            seen = await tasks.GetTask(pb.GetTaskRequest(task_id=created.task.id), metadata=bearer("labeller"))
            assert seen.task.id == created.task.id
    finally:
        server.stop()
