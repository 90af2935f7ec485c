"""Checkpoints are part of the task's record (issue 39, point 3): a thread is a task, each checkpoint and batch of
writes is an event of it, values round-trip byte for byte, copies fork the task, retention applies, and bad input
is INVALID_ARGUMENT naming the field. On both engines (POSTGRES_E2E)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import checkpoint_pb2 as cpb, checkpoint_service_pb2 as pb, checkpoint_service_pb2_grpc
from taskmem.v1 import event_pb2, task_pb2, task_service_pb2 as tpb, task_service_pb2_grpc
from tests.support.eventually import eventually
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.server_process import ServerProcess

PUT, WRITES, COPIED, DELETED = (event_pb2.EVENT_TYPE_CHECKPOINT_PUT, event_pb2.EVENT_TYPE_CHECKPOINT_WRITES_PUT,
                                event_pb2.EVENT_TYPE_CHECKPOINT_THREAD_COPIED, event_pb2.EVENT_TYPE_CHECKPOINTS_DELETED)
EVERY_BYTE = bytes(range(256)) * 4


@pytest.fixture(scope="module")
def record_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("checkpoints") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def stubs(record_server: ServerProcess) -> AsyncIterator[tuple[checkpoint_service_pb2_grpc.CheckpointServiceStub,
                                                                      task_service_pb2_grpc.TaskServiceStub]]:
    async with grpc.aio.insecure_channel(record_server.address) as channel:
        yield checkpoint_service_pb2_grpc.CheckpointServiceStub(channel), task_service_pb2_grpc.TaskServiceStub(channel)


def checkpoint(thread: str, checkpoint_id: str, parent: str = "", data: bytes = b"\x81\xa1v\x01", ns: str = "",
               metadata: str = '{"source": "loop", "step": 1}') -> cpb.Checkpoint:
    return cpb.Checkpoint(thread_id=thread, checkpoint_ns=ns, checkpoint_id=checkpoint_id, parent_checkpoint_id=parent,
                          value=cpb.SerializedValue(type="msgpack", data=data), metadata_json=metadata)


async def events_of(tasks: task_service_pb2_grpc.TaskServiceStub, task_id: str) -> list[event_pb2.Event]:
    return list((await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], page_size=500))).events)


async def test_values_and_writes_round_trip_byte_for_byte(stubs) -> None:  # type: ignore[no-untyped-def]
    checkpoints, _ = stubs
    metadata = '{"step": 3, "source": "loop", "score": 1.50, "note": "caf\\u00e9 \\u0000", "parents": {}}'
    await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint(
        "bytes", "01", data=EVERY_BYTE, metadata=metadata)))
    await checkpoints.PutCheckpointWrites(pb.PutCheckpointWritesRequest(thread_id="bytes", checkpoint_id="01", writes=[
        cpb.PendingWrite(graph_task_id="t", idx=0, channel="c", value=cpb.SerializedValue(type="bytes", data=b"\x00"),
                         graph_task_path="~root"),
        cpb.PendingWrite(graph_task_id="t", idx=1, channel="c", value=cpb.SerializedValue(type="bytes", data=EVERY_BYTE))]))

    got = (await checkpoints.GetCheckpoint(pb.GetCheckpointRequest(thread_id="bytes"))).checkpoint
    assert got.value.type == "msgpack" and got.value.data == EVERY_BYTE
    assert got.metadata_json == metadata and got.step == 3 and got.source == "loop"
    # in LangGraph's order: (task path, task id, idx)
    assert [(w.idx, w.value.type, w.value.data, w.graph_task_path) for w in got.pending_writes] == [
        (1, "bytes", EVERY_BYTE, ""), (0, "bytes", b"\x00", "~root")]
    listed = (await checkpoints.ListCheckpoints(pb.ListCheckpointsRequest(thread_id="bytes"))).checkpoints
    assert listed[0].value.data == EVERY_BYTE and listed[0].pending_writes[0].value.data == EVERY_BYTE


async def test_each_checkpoint_and_batch_of_writes_is_an_event_of_the_threads_new_task(stubs) -> None:  # type: ignore[no-untyped-def]
    checkpoints, tasks = stubs
    first = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("evt", "01")))
    await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("evt", "02", parent="01")))
    await checkpoints.PutCheckpointWrites(pb.PutCheckpointWritesRequest(thread_id="evt", checkpoint_id="02", writes=[
        cpb.PendingWrite(graph_task_id="t", idx=0, channel="c", value=cpb.SerializedValue(type="json", data=b"1"))]))

    task_id = first.checkpoint.task_id
    task = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task_id))).task
    assert task.name == "LangGraph thread evt" and task.status == task_pb2.TASK_STATUS_EXECUTING
    events = [e for e in await events_of(tasks, task_id) if e.type in (PUT, WRITES)]
    assert [e.type for e in events] == [PUT, PUT, WRITES]
    assert events[1].payload["checkpoint_id"] == "02" and events[1].payload["parent_checkpoint_id"] == "01"
    assert events[1].payload["size_bytes"] == 4 and "value" not in events[1].payload
    assert events[2].payload["writes"][0]["channel"] == "c"


async def test_a_thread_named_by_a_task_id_or_given_a_task_joins_that_task(stubs) -> None:  # type: ignore[no-untyped-def]
    checkpoints, tasks = stubs
    task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="an agent's task"))).task.id
    by_name = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint(task_id, "01")))
    given = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("side", "01"),
                                                                    task_id=task_id))
    assert by_name.checkpoint.task_id == task_id and given.checkpoint.task_id == task_id
    steps = await checkpoints.ListCheckpoints(pb.ListCheckpointsRequest(task_id=task_id, omit_values=True))
    assert {(c.thread_id, c.checkpoint_id) for c in steps.checkpoints} == {(task_id, "01"), ("side", "01")}
    assert all(not c.HasField("value") for c in steps.checkpoints)
    other = (await tasks.CreateTask(tpb.CreateTaskRequest(name="another"))).task.id
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("side", "02", parent="01"),
                                                                task_id=other))
    assert_rpc_error(refused.value, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_FAILED_PRECONDITION")


async def test_copying_a_thread_forks_its_task_at_the_newest_copied_checkpoint(stubs) -> None:  # type: ignore[no-untyped-def]
    checkpoints, tasks = stubs
    source = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("src", "01")))
    await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("src", "02", parent="01")))
    await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("src", "03", parent="02")))
    source_task = source.checkpoint.task_id

    copied = await checkpoints.CopyCheckpointThread(pb.CopyCheckpointThreadRequest(
        source_thread_id="src", target_thread_id="dst", checkpoint_id="02"))

    assert copied.copied_count == 2 and copied.task.forked_from == source_task and copied.task.forked_at > 0
    assert copied.task.name == "LangGraph thread dst"
    listed = await checkpoints.ListCheckpoints(pb.ListCheckpointsRequest(thread_id="dst"))
    assert [c.checkpoint_id for c in listed.checkpoints] == ["02", "01"]
    assert {c.task_id for c in listed.checkpoints} == {copied.task.id}
    for task_id in (source_task, copied.task.id):
        assert COPIED in [e.type for e in await events_of(tasks, task_id)]
    forked_event = next(e for e in await events_of(tasks, source_task) if e.cursor == copied.task.forked_at)
    assert forked_event.type == PUT and forked_event.payload["checkpoint_id"] == "02"


async def test_deleting_a_thread_keeps_its_task_and_says_so_in_an_event(stubs) -> None:  # type: ignore[no-untyped-def]
    checkpoints, tasks = stubs
    put = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("gone", "01")))
    deleted = await checkpoints.DeleteCheckpointThread(pb.DeleteCheckpointThreadRequest(thread_id="gone"))
    assert deleted.deleted_count == 1
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await checkpoints.GetCheckpoint(pb.GetCheckpointRequest(thread_id="gone"))
    assert_rpc_error(missing.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=put.checkpoint.task_id))).task.id
    last = (await events_of(tasks, put.checkpoint.task_id))[-1]
    assert last.type == DELETED and last.payload["reason"] == "thread" and last.payload["deleted_count"] == 1


@pytest.mark.parametrize("request_, field", [
    (pb.PutCheckpointRequest(checkpoint=checkpoint("", "01")), "checkpoint.thread_id"),
    (pb.PutCheckpointRequest(checkpoint=checkpoint("t", "")), "checkpoint.checkpoint_id"),
    (pb.PutCheckpointRequest(checkpoint=checkpoint("t", "01", metadata="[1, 2]")), "checkpoint.metadata_json"),
    (pb.PutCheckpointRequest(checkpoint=checkpoint("t", "01", metadata="{")), "checkpoint.metadata_json"),
    (pb.PutCheckpointRequest(checkpoint=cpb.Checkpoint(thread_id="t", checkpoint_id="01")), "checkpoint.value"),
    (pb.PutCheckpointWritesRequest(thread_id="t", checkpoint_id="01"), "writes"),
    (pb.ListCheckpointsRequest(page_size=101), "page_size"),
    (pb.DeleteCheckpointRunsRequest(), "run_ids"),
    (pb.PruneCheckpointsRequest(thread_ids=["t"], strategy=7), "strategy"),
    (pb.CopyCheckpointThreadRequest(source_thread_id="a", target_thread_id="a"), "target_thread_id"),
], ids=lambda value: value if isinstance(value, str) else type(value).__name__)
async def test_bad_input_is_invalid_argument_naming_the_field(stubs, request_, field: str) -> None:  # type: ignore[no-untyped-def]
    checkpoints, _ = stubs
    method = getattr(checkpoints, type(request_).__name__.removesuffix("Request"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await method(request_)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
    assert error_info(refused.value).metadata["field"] == field


def test_a_superseded_checkpoint_expires_after_the_ttl_and_the_newest_never_does(tmp_path: Path) -> None:
    ttl = 20  # long enough that the superseded checkpoint is still listed right after, on a loaded machine
    server = ServerProcess(tmp_path / "taskmem.db", env={
        "TASKMEM_RETENTION": f"{{default: {{checkpoints: {ttl}}}}}", "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0.3"})
    server.start()
    try:
        asyncio.run(_expire(server, ttl))
    finally:
        server.stop()


async def _expire(server: ServerProcess, ttl: int) -> None:
    async with grpc.aio.insecure_channel(server.address) as channel:
        checkpoints = checkpoint_service_pb2_grpc.CheckpointServiceStub(channel)
        tasks = task_service_pb2_grpc.TaskServiceStub(channel)
        put = await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("old", "01")))
        await checkpoints.PutCheckpoint(pb.PutCheckpointRequest(checkpoint=checkpoint("old", "02", parent="01")))
        listed = (await checkpoints.ListCheckpoints(pb.ListCheckpointsRequest(thread_id="old"))).checkpoints
        assert [(c.checkpoint_id, c.HasField("expire_time")) for c in listed] == [("02", False), ("01", True)]
        assert listed[1].expire_time.ToMicroseconds() - listed[0].create_time.ToMicroseconds() <= ttl * 1_000_000
        async def deleted_by_retention() -> bool:
            events = await events_of(tasks, put.checkpoint.task_id)
            return any(e.type == DELETED and e.payload["reason"] == "retention" for e in events)

        await eventually(deleted_by_retention, "maintenance deleting the old checkpoint", interval=0.2)
        listed = (await checkpoints.ListCheckpoints(pb.ListCheckpointsRequest(thread_id="old"))).checkpoints
        assert [c.checkpoint_id for c in listed] == ["02"]
        assert server.sql("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?", ("old",)) == [("02",)]
