"""Hardening (issue 12) end to end: file waits that cannot read outside their roots, probes that cannot stall or
orphan a wait, an empty default http allow-list, no UNKNOWN or INTERNAL for caller input, durable and bounded
working memory, keys never in clear text, event cursors checked, metadata merged by key."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, struct_pb2

from taskmem.api.admission import Admission
from taskmem.api.interceptors import GuardInterceptor
from taskmem.config import Config
from taskmem.core.errors import NotFound
from taskmem.settings import AuthSettings
from taskmem.v1 import event_pb2, state_pb2, task_pb2, wait_pb2, webhook_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.ports import unused_port
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.server_process import ServerProcess
from tests.support.trickle_http import TrickleServer
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

INVALID = grpc.StatusCode.INVALID_ARGUMENT
POLL = duration_pb2.Duration(nanos=100_000_000)
FAILED, RESOLVED = wait_pb2.WAIT_STATUS_FAILED, wait_pb2.WAIT_STATUS_RESOLVED


# --- fixtures and helpers ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one file root: it holds the database's folder (db/) and the workspaces."""
    return tmp_path_factory.mktemp("hardening")


@pytest.fixture(scope="module")
def trickle_port() -> int:
    return unused_port()


@pytest.fixture(scope="module")
def hardened(base: Path, trickle_port: int) -> Iterator[ServerProcess]:
    (base / "db").mkdir()
    env = {"TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1", "TASKMEM_WAIT_FILE_ROOTS": f"default={base}",
           "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": f"127.0.0.1:{trickle_port}", "TASKMEM_WORKING_MEMORY_MAX_AGENTS": "3",
           "TASKMEM_WORKING_MEMORY_MAX_BYTES": "2000", "TASKMEM_WAIT_PROBE_TIMEOUT_SECONDS": "1"}
    process = ServerProcess(base / "db" / "taskmem.db", env=env)
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def channel(hardened: ServerProcess) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(hardened.address) as opened:
        yield opened


async def new_task(channel: grpc.aio.Channel, **fields: Any) -> task_pb2.Task:
    return (await TaskServiceStub(channel).CreateTask(tpb.CreateTaskRequest(name="hardening", **fields))).task


async def file_wait(channel: grpc.aio.Channel, workspace: Path, path: str, contains: str = "") -> wait_pb2.Wait:
    task = await new_task(channel, workspace=str(workspace))
    target = wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=path, contains=contains))
    request = wpb.CreateWaitRequest(task_id=task.id, target=target, poll_interval=POLL)
    return (await WaitServiceStub(channel).CreateWait(request)).wait


async def ended(channel: grpc.aio.Channel, wait_id: str) -> wait_pb2.Wait:
    async def watch() -> wait_pb2.Wait:
        last = None
        async for response in WaitServiceStub(channel).WatchWait(wpb.WatchWaitRequest(wait_id=wait_id)):
            last = response.wait
        assert last is not None
        return last

    return await asyncio.wait_for(watch(), HANG_GUARD_SECONDS)


async def raises(call: Any) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    return raised.value


def workspace(base: Path, name: str) -> Path:
    folder = base / name
    folder.mkdir()
    return folder


# --- 1. file waits read only below wait_file_roots ---------------------------------------------

async def test_file_waits_are_refused_until_wait_file_roots_is_set(fresh_server: ServerProcess,
                                                                   tmp_path: Path) -> None:
    async with grpc.aio.insecure_channel(fresh_server.start()) as opened:
        error = await raises(file_wait(opened, tmp_path, "out.txt"))
    assert_rpc_error(error, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")
    assert error_info(error).metadata["setting"] == "wait_file_roots"


async def test_a_workspace_outside_the_roots_is_invalid(channel: grpc.aio.Channel) -> None:
    error = await raises(file_wait(channel, Path("/"), "etc/passwd", contains="root:x:0:"))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "target.file.path")


async def test_the_database_folder_is_never_read(channel: grpc.aio.Channel, base: Path) -> None:
    for name in ("taskmem.db", "taskmem.db-wal"):
        wait = await file_wait(channel, base / "db", name)
        done = await ended(channel, wait.id)
        assert done.status == FAILED and "database folder" in done.result
    through_root = await file_wait(channel, base, "db/taskmem.db")
    assert "database folder" in (await ended(channel, through_root.id)).result


async def test_a_hard_link_to_a_file_outside_the_workspace_is_refused(channel: grpc.aio.Channel, base: Path,
                                                                      tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("the secret")
    folder = workspace(base, "hard-link")
    os.link(outside, folder / "linked.txt")
    done = await ended(channel, (await file_wait(channel, folder, "linked.txt", contains="secret")).id)
    assert done.status == FAILED and "hard links" in done.result


async def test_a_symlinked_folder_on_the_way_is_not_followed(channel: grpc.aio.Channel, base: Path,
                                                             tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "result.txt").write_text("DONE")
    folder = workspace(base, "symlinked-folder")
    wait = await file_wait(channel, folder, "out/result.txt", contains="DONE")
    os.symlink(tmp_path / "outside", folder / "out")  # after creation, which refuses a link already there
    done = await ended(channel, wait.id)
    assert done.status == FAILED and "symbolic link" in done.result


async def test_a_file_below_the_root_still_resolves(channel: grpc.aio.Channel, base: Path) -> None:
    folder = workspace(base, "plain")
    wait = await file_wait(channel, folder, "out/result.txt", contains="DONE")
    (folder / "out").mkdir()
    (folder / "out" / "result.txt").write_text("... DONE")
    done = await ended(channel, wait.id)
    assert done.status == RESOLVED and done.result == "out/result.txt contains 'DONE'"


# --- 2. probes: deadlines, per-kind slots, errors retried then FAILED --------------------------

async def test_a_look_that_keeps_raising_is_retried_then_the_wait_fails(channel: grpc.aio.Channel,
                                                                        base: Path) -> None:
    folder = workspace(base, "raising")
    wait = await file_wait(channel, folder, "n" * 300)  # every open fails with ENAMETOOLONG
    done = await ended(channel, wait.id)
    assert done.status == FAILED
    assert "failed 5 times in a row" in done.result and "File name too long" in done.result


async def test_a_trickling_http_body_does_not_outlive_the_probe_deadline(
        channel: grpc.aio.Channel, trickle_port: int) -> None:
    with TrickleServer(port=trickle_port) as url:
        slow = (await WaitServiceStub(channel).CreateWait(wpb.CreateWaitRequest(
            target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{url}/0", body_contains="never")),
            poll_interval=POLL, timeout=duration_pb2.Duration(seconds=4)))).wait
        timed_out = await ended(channel, slow.id)
    assert timed_out.status == wait_pb2.WAIT_STATUS_TIMED_OUT
    assert "no complete answer within 1s" in timed_out.result


async def test_http_bodies_still_being_read_do_not_stall_file_waits(tmp_path: Path) -> None:
    # The probes' deadline is a minute, so a file wait queued behind the slow reads would not resolve before
    # ended()'s 20 s guard; it resolves while every slow body is still being read, whatever the machine's load.
    (tmp_path / "db").mkdir()
    trickle = TrickleServer()
    port = trickle.url.rsplit(":", 1)[1]
    server = ServerProcess(tmp_path / "db" / "taskmem.db", env={
        "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1", "TASKMEM_WAIT_FILE_ROOTS": f"default={tmp_path}",
        "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": f"127.0.0.1:{port}", "TASKMEM_WAIT_PROBE_TIMEOUT_SECONDS": "60"})
    server.start()
    try:
        with trickle as url:
            async with grpc.aio.insecure_channel(server.address) as opened:
                waits = WaitServiceStub(opened)
                for n in range(8):
                    await waits.CreateWait(wpb.CreateWaitRequest(
                        target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{url}/{n}", body_contains="never")),
                        poll_interval=POLL))
                await eventually(lambda: trickle.reading >= 8, "all 8 slow bodies being read")
                folder = workspace(tmp_path, "unstalled")
                wait = await file_wait(opened, folder, "flag")
                (folder / "flag").write_text("")
                assert (await ended(opened, wait.id)).status == RESOLVED
                assert trickle.reading == 8  # none of the slow reads had to end first
    finally:
        server.stop()


# --- 3. http waits are off until hosts are listed ----------------------------------------------

async def test_http_waits_are_refused_with_the_default_allow_list(fresh_server: ServerProcess) -> None:
    async with grpc.aio.insecure_channel(fresh_server.start()) as opened:
        target = wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url="http://127.0.0.1:9/health"))
        error = await raises(WaitServiceStub(opened).CreateWait(wpb.CreateWaitRequest(target=target)))
    assert_rpc_error(error, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")
    assert error_info(error).metadata["setting"] == "wait_http_allowed_hosts"


# --- 4. no UNKNOWN or INTERNAL for caller input ------------------------------------------------

@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
async def test_a_non_finite_payload_value_is_invalid(channel: grpc.aio.Channel, number: float) -> None:
    task = await new_task(channel)
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
        task_id=task.id, type=event_pb2.EVENT_TYPE_TASK_UPDATED, payload_field="metadata.score",
        payload_value=struct_pb2.Value(number_value=number)))
    error = await raises(WaitServiceStub(channel).CreateWait(wpb.CreateWaitRequest(target=target)))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "target.event.payload_value")


async def test_huge_enum_filters_are_refused_at_once_and_duplicates_are_one(channel: grpc.aio.Channel) -> None:
    tasks, waits, state = TaskServiceStub(channel), WaitServiceStub(channel), StateServiceStub(channel)
    task = await new_task(channel)
    many = 250_000
    calls = [
        ("statuses", tasks.ListTasks(tpb.ListTasksRequest(statuses=[task_pb2.TASK_STATUS_PENDING] * many))),
        ("kinds", tasks.ListMessages(tpb.ListMessagesRequest(
            task_id=task.id, kinds=[task_pb2.MESSAGE_KIND_TEXT] * many))),
        ("statuses", waits.ListWaits(wpb.ListWaitsRequest(statuses=[wait_pb2.WAIT_STATUS_WAITING] * many))),
        ("types", state.ListStateItems(spb.ListStateItemsRequest(
            task_id=task.id, types=[state_pb2.STATE_ITEM_TYPE_DECISION] * many))),
        ("types", tasks.ListEvents(tpb.ListEventsRequest(types=[event_pb2.EVENT_TYPE_TASK_CREATED] * many))),
        ("statuses", tasks.ListActions(tpb.ListActionsRequest(
            task_id=task.id, statuses=[task_pb2.ACTION_STATUS_RUNNING] * many))),
        ("states", tasks.ListWebhookDeliveries(tpb.ListWebhookDeliveriesRequest(
            states=[webhook_pb2.WEBHOOK_DELIVERY_STATE_PENDING] * many))),
        ("webhook_event_types", tasks.CreateTask(tpb.CreateTaskRequest(
            name="many types", webhook_event_types=[event_pb2.EVENT_TYPE_TASK_CREATED] * many))),
    ]
    for field, call in calls:  # refused by their count, not by how long a machine takes to read them
        assert_rpc_error(await raises(call), INVALID, "ERROR_REASON_LIMIT_EXCEEDED", field)
    pending = await tasks.ListTasks(tpb.ListTasksRequest(statuses=[task_pb2.TASK_STATUS_PENDING] * 100))
    assert task.id in [t.id for t in pending.tasks]
    repeated = await new_task(channel, webhook_event_types=[event_pb2.EVENT_TYPE_TASK_CREATED] * 100)
    assert list(repeated.webhook_event_types) == [event_pb2.EVENT_TYPE_TASK_CREATED]


async def test_an_unmapped_exception_is_internal_with_a_request_id_and_domain_errors_map_for_every_rpc(
        caplog: pytest.LogCaptureFixture) -> None:
    """The interceptor alone maps errors: these handlers carry no decorator."""

    async def broken(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        raise ZeroDivisionError("a defect")

    async def missing(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        yield b""
        raise NotFound("task", "tsk_x")

    handlers = grpc.method_handlers_generic_handler("taskmem.v1.Probe", {
        "Broken": grpc.unary_unary_rpc_method_handler(broken),
        "Missing": grpc.unary_stream_rpc_method_handler(missing),
    })
    server = grpc.aio.server(interceptors=[GuardInterceptor(AuthSettings.of(Config()), Admission(64, 100, 20.0))])
    server.add_generic_rpc_handlers([handlers])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as opened:
            error = await raises(opened.unary_unary("/taskmem.v1.Probe/Broken")(b""))
            assert error.code() == grpc.StatusCode.INTERNAL
            request_id = error_info(error).metadata["request_id"]
            assert request_id in error.details()
            stream = opened.unary_stream("/taskmem.v1.Probe/Missing")(b"")
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                async for _ in stream:
                    pass
            assert_rpc_error(raised.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    finally:
        await server.stop(None)
    assert any(request_id in record.getMessage() and record.exc_info for record in caplog.records)


# --- 5. working memory: durable and bounded ----------------------------------------------------

async def test_an_acknowledged_working_memory_survives_sigkill(fresh_server: ServerProcess) -> None:
    async with grpc.aio.insecure_channel(fresh_server.start()) as opened:
        state = StateServiceStub(opened)
        for n in range(8):
            await state.PutWorkingMemory(spb.PutWorkingMemoryRequest(working_memory=state_pb2.WorkingMemory(
                agent_id=f"agent-{n}", current_plan=f"plan {n}", scratchpad=[f"note {n}"])))
    fresh_server.stop(signal.SIGKILL)
    async with grpc.aio.insecure_channel(fresh_server.start()) as opened:
        state = StateServiceStub(opened)
        for n in range(8):
            memory = (await state.GetWorkingMemory(spb.GetWorkingMemoryRequest(agent_id=f"agent-{n}"))).working_memory
            assert memory.current_plan == f"plan {n}" and list(memory.scratchpad) == [f"note {n}"]
            assert memory.etag == 'W/"1"'


async def test_working_memory_is_bounded_per_agent_and_per_namespace(channel: grpc.aio.Channel) -> None:
    state = StateServiceStub(channel)

    def put(agent_id: str, plan: str = "") -> Any:
        return state.PutWorkingMemory(spb.PutWorkingMemoryRequest(
            working_memory=state_pb2.WorkingMemory(agent_id=agent_id, current_plan=plan)))

    big = await raises(put("big", "x" * 3000))
    assert_rpc_error(big, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_EXCEEDED")
    assert error_info(big).metadata["limit"] == "working_memory_max_bytes"
    for n in range(3):
        await put(f"bounded-{n}")
    await put("bounded-0", "a second write of a known agent")
    crowded = await raises(put("bounded-3"))
    assert_rpc_error(crowded, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_LIMIT_EXCEEDED")
    assert error_info(crowded).metadata["limit"] == "working_memory_max_agents"


# --- 6. API keys never cross the network in clear text -----------------------------------------

def test_with_api_keys_a_non_loopback_listen_needs_tls_or_insecure(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "taskmem", "serve", "--listen", "0.0.0.0:0", "--database",
               str(tmp_path / "t.db"), "--api-key", "k1"]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "clear text" in refused.stderr and "tls_cert_file" in refused.stderr and "--insecure" in refused.stderr
    allowed = ServerProcess(tmp_path / "t.db", "--api-key", "k1", "--insecure")
    allowed.address = "0.0.0.0:0"
    try:
        assert allowed.start()
    finally:
        allowed.stop()


# --- 7. event cursors and task ids are checked -------------------------------------------------

async def test_a_malformed_task_id_in_an_event_filter_is_invalid(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(task_ids=["not-an-id"]))
    error = await raises(asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "task_ids")
    error = await raises(tasks.ListEvents(tpb.ListEventsRequest(task_ids=["not-an-id"])))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "task_ids")


async def test_a_cursor_beyond_the_head_is_out_of_range_with_the_head(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    await new_task(channel)
    head = (await tasks.ListEvents(tpb.ListEventsRequest(page_size=500))).events[-1].cursor
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(after_cursor=head + 1_000_000))
    error = await raises(asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS))
    assert error.code() == grpc.StatusCode.OUT_OF_RANGE
    assert int(error_info(error).metadata["head_cursor"]) >= head
    listed = await raises(tasks.ListEvents(tpb.ListEventsRequest(after_cursor=head + 1_000_000)))
    assert listed.code() == grpc.StatusCode.OUT_OF_RANGE and error_info(listed).metadata["field"] == "after_cursor"
    at_head = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(after_cursor=head))
    await new_task(channel)
    assert (await asyncio.wait_for(at_head.read(), HANG_GUARD_SECONDS)).event.cursor > head
    at_head.cancel()


# --- 8. metadata merges by key; server-kept keys stay ------------------------------------------

async def test_metadata_updates_merge_by_key_and_keep_the_server_keys(channel: grpc.aio.Channel) -> None:
    tasks = TaskServiceStub(channel)
    task = await new_task(channel, metadata=struct_pb2.Struct(fields={
        "owner": struct_pb2.Value(string_value="ann"), "team": struct_pb2.Value(string_value="infra")}))
    wait = (await WaitServiceStub(channel).CreateWait(wpb.CreateWaitRequest(
        task_id=task.id, target=wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget())))).wait

    async def update(paths: list[str], **metadata: str) -> dict[str, Any]:
        change = task_pb2.Task(id=task.id, metadata=struct_pb2.Struct(
            fields={k: struct_pb2.Value(string_value=v) for k, v in metadata.items()}))
        updated = await tasks.UpdateTask(tpb.UpdateTaskRequest(
            task=change, update_mask=field_mask_pb2.FieldMask(paths=paths)))
        return dict(updated.task.metadata.items())

    merged = await update(["metadata.owner"], owner="bob")
    assert merged["owner"] == "bob" and merged["team"] == "infra" and list(merged["active_wait_ids"]) == [wait.id]
    removed = await update(["metadata.team"])
    assert "team" not in removed and removed["owner"] == "bob"
    replaced = await update(["metadata"], stage="two", active_wait_ids="forged")
    assert replaced["stage"] == "two" and "owner" not in replaced
    assert list(replaced["active_wait_ids"]) == [wait.id] and replaced["last_wait_state"] == "watching"
    error = await raises(update(["metadata.active_wait_ids"], active_wait_ids="forged"))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "update_mask")


# --- 4 (continued): no non-finite number in any request's Struct ------------------------------

def _nan_struct() -> struct_pb2.Struct:
    nested = struct_pb2.Struct()
    nested.update({"fine": "yes", "deep": {"list": [1.0, float("nan")]}})
    return nested


_NON_FINITE_STRUCTS = {
    "CreateTask.context": lambda task: ("/taskmem.v1.TaskService/CreateTask", tpb.CreateTaskRequest(
        name="n", context=_nan_struct()), tpb.CreateTaskResponse, "context.deep.list[1]"),
    "CreateTask.metadata": lambda task: ("/taskmem.v1.TaskService/CreateTask", tpb.CreateTaskRequest(
        name="n", metadata=_nan_struct()), tpb.CreateTaskResponse, "metadata.deep.list[1]"),
    "CreateTask.plan.input": lambda task: ("/taskmem.v1.TaskService/CreateTask", tpb.CreateTaskRequest(
        name="n", plan=[task_pb2.PlanItemSpec(id="a", title="a", input=_nan_struct())]),
        tpb.CreateTaskResponse, "plan[0].input.deep.list[1]"),
    "UpdateTask.context": lambda task: ("/taskmem.v1.TaskService/UpdateTask", tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task, context=_nan_struct()), update_mask=field_mask_pb2.FieldMask(paths=["context"])),
        tpb.UpdateTaskResponse, "task.context.deep.list[1]"),
    "UpdateTask.metadata": lambda task: ("/taskmem.v1.TaskService/UpdateTask", tpb.UpdateTaskRequest(
        task=task_pb2.Task(id=task, metadata=_nan_struct()),
        update_mask=field_mask_pb2.FieldMask(paths=["metadata.deep"])), tpb.UpdateTaskResponse,
        "task.metadata.deep.list[1]"),
    "RecordAction.input": lambda task: ("/taskmem.v1.TaskService/RecordAction", tpb.RecordActionRequest(
        task_id=task, summary="s", input=_nan_struct()), tpb.RecordActionResponse, "input.deep.list[1]"),
    "RecordAction.output": lambda task: ("/taskmem.v1.TaskService/RecordAction", tpb.RecordActionRequest(
        task_id=task, summary="s", output=_nan_struct()), tpb.RecordActionResponse, "output.deep.list[1]"),
    "PutWorkingMemory.task_context": lambda task: (
        "/taskmem.v1.StateService/PutWorkingMemory", spb.PutWorkingMemoryRequest(
            working_memory=state_pb2.WorkingMemory(agent_id="nan", task_context=_nan_struct())),
        spb.PutWorkingMemoryResponse, "working_memory.task_context.deep.list[1]"),
    "RecordPattern.data": lambda task: ("/taskmem.v1.MemoryService/RecordPattern", mpb.RecordPatternRequest(
        pattern_type="t", pattern_key="k", data=_nan_struct()), mpb.RecordPatternResponse, "data.deep.list[1]"),
}


@pytest.mark.parametrize("case", sorted(_NON_FINITE_STRUCTS))
async def test_a_non_finite_number_anywhere_in_a_request_struct_is_invalid_naming_its_path(
        channel: grpc.aio.Channel, case: str) -> None:
    task = await new_task(channel)
    path, request, response, field = _NON_FINITE_STRUCTS[case](task.id)
    call = channel.unary_unary(path, request_serializer=type(request).SerializeToString,
                               response_deserializer=response.FromString)
    assert_rpc_error(await raises(call(request)), INVALID, "ERROR_REASON_INVALID_FIELD", field)


async def test_a_non_finite_number_in_an_action_result_is_invalid_naming_its_path(channel: grpc.aio.Channel) -> None:
    task = await new_task(channel)
    tasks = TaskServiceStub(channel)
    action = (await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task.id, summary="s", status=task_pb2.ACTION_STATUS_RUNNING))).action
    error = await raises(tasks.CompleteAction(tpb.CompleteActionRequest(
        action_id=action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED, output=_nan_struct())))
    assert_rpc_error(error, INVALID, "ERROR_REASON_INVALID_FIELD", "output.deep.list[1]")
