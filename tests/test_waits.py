"""WaitService end to end: every target kind resolves and times out, cancel, forced resolution,
WatchWait, restarts, and the outcome written into the linked task's history and metadata."""

from __future__ import annotations

import asyncio
import http.server
import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, field_mask_pb2, struct_pb2

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_pb2
from taskmem.v1 import wait_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

ADMIN_KEY = "admin-secret"
FAST_POLLS = {"TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1", "TASKMEM_ADMIN_KEYS": ADMIN_KEY}
INVALID = grpc.StatusCode.INVALID_ARGUMENT
WAITING, RESOLVED = wait_pb2.WAIT_STATUS_WAITING, wait_pb2.WAIT_STATUS_RESOLVED
TIMED_OUT, CANCELLED, FAILED = wait_pb2.WAIT_STATUS_TIMED_OUT, wait_pb2.WAIT_STATUS_CANCELLED, wait_pb2.WAIT_STATUS_FAILED
POLL = duration_pb2.Duration(nanos=100_000_000)


def seconds(value: float) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=int(value), nanos=int(round((value % 1) * 1e9)))


# --- fixtures ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def wait_server(tmp_path_factory: pytest.TempPathFactory,
                http_site: tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]]) -> Iterator[ServerProcess]:
    # Workspaces are pytest temporary folders, below the base one (which also holds the database's folder),
    # the default namespace's root by name.
    roots = {"TASKMEM_WAIT_FILE_ROOTS": f"default={tmp_path_factory.getbasetemp()}",
             "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": http_site[0].removeprefix("http://")}
    process = ServerProcess(tmp_path_factory.mktemp("waits") / "taskmem.db", env={**FAST_POLLS, **roots})
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(wait_server: ServerProcess) -> AsyncIterator[tuple[TaskServiceStub, WaitServiceStub]]:
    async with grpc.aio.insecure_channel(wait_server.address) as channel:
        yield TaskServiceStub(channel), WaitServiceStub(channel)


class _Answers(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        status, body, headers = self.routes.get(self.path, (404, b"no such route", {}))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def http_site() -> Iterator[tuple[str, dict[str, tuple[int, bytes, dict[str, str]]]]]:
    """A tiny HTTP server on 127.0.0.1 whose answers a test sets per path."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Answers.routes
    server.shutdown()


# --- helpers -----------------------------------------------------------------------------------

async def new_task(tasks: TaskServiceStub, **fields: Any) -> task_pb2.Task:
    fields.setdefault("name", "waiting task")
    return (await tasks.CreateTask(tpb.CreateTaskRequest(**fields))).task


async def set_status(tasks: TaskServiceStub, task_id: str, status: int) -> None:
    await tasks.UpdateTask(tpb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=status),  # type: ignore[arg-type]
                                                 update_mask=field_mask_pb2.FieldMask(paths=["status"])))


async def create(waits: WaitServiceStub, target: wait_pb2.WaitTarget, **fields: Any) -> wait_pb2.Wait:
    return (await waits.CreateWait(pb.CreateWaitRequest(target=target, **fields))).wait


async def ended(waits: WaitServiceStub, wait_id: str) -> wait_pb2.Wait:
    """The wait once it has left WAITING, read through WatchWait."""
    async def watch() -> wait_pb2.Wait:
        last = None
        async for response in waits.WatchWait(pb.WatchWaitRequest(wait_id=wait_id)):
            last = response.wait
        assert last is not None
        return last

    return await asyncio.wait_for(watch(), HANG_GUARD_SECONDS)


async def wait_messages(tasks: TaskServiceStub, task_id: str) -> list[str]:
    page = await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id, kinds=[task_pb2.MESSAGE_KIND_WAIT]))
    for message in page.messages:
        assert message.role == task_pb2.MESSAGE_ROLE_SYSTEM
    return [m.content for m in page.messages]


async def expect_error(call: Any, code: grpc.StatusCode, reason: str, field: str | None = None) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert_rpc_error(raised.value, code, reason, field)


def timer(value: float) -> wait_pb2.WaitTarget:
    return wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=seconds(value)))


def external(resolver: str = "") -> wait_pb2.WaitTarget:
    return wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(resolver=resolver))


# --- timer and the linked task -----------------------------------------------------------------

async def test_a_timer_resolves_and_its_outcome_is_in_the_task_history_and_metadata(
        rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    wait = await create(waits, timer(0.5), task_id=task.id, criteria="build cache warm")
    assert wait.status == WAITING and wait.id.startswith("wai_") and wait.HasField("create_time")
    watching = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata
    assert list(watching["active_wait_ids"]) == [wait.id] and watching["last_wait_state"] == "watching"

    done = await ended(waits, wait.id)
    assert done.status == RESOLVED and done.result == "0.5s elapsed" and done.HasField("end_time")
    assert await wait_messages(tasks, task.id) == [
        "[Wait started] build cache warm", "[Wait resolved] build cache warm → 0.5s elapsed"]
    metadata = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata
    assert list(metadata["active_wait_ids"]) == [] and metadata["last_wait_state"] == "resolved"
    assert abs(metadata["last_wait_event_at"] - time.time()) < 60
    events = await tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task.id], types=[event_pb2.EVENT_TYPE_WAIT_CREATED, event_pb2.EVENT_TYPE_WAIT_RESOLVED]))
    assert [(e.type, e.payload["id"]) for e in events.events] == [
        (event_pb2.EVENT_TYPE_WAIT_CREATED, wait.id), (event_pb2.EVENT_TYPE_WAIT_RESOLVED, wait.id)]
    assert events.events[1].payload["status"] == "WAIT_STATUS_RESOLVED"


async def test_a_timer_longer_than_its_timeout_times_out(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    wait = await create(waits, timer(30), task_id=task.id, timeout=seconds(0.5))
    assert wait.HasField("deadline_time")
    done = await ended(waits, wait.id)
    assert done.status == TIMED_OUT and done.result == "no outcome within 0.5s"
    assert (await wait_messages(tasks, task.id))[-1] == "[Wait timed out] timer 30s → no outcome within 0.5s"
    metadata = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata
    assert metadata["last_wait_state"] == "timeout" and list(metadata["active_wait_ids"]) == []


# --- task_status --------------------------------------------------------------------------------

async def test_a_task_status_wait_resolves_when_the_watched_task_gets_there(
        rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    mine, other = await new_task(tasks), await new_task(tasks, name="deploy")
    target = wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
        task_id=other.id, statuses=[task_pb2.TASK_STATUS_COMPLETED]))
    wait = await create(waits, target, task_id=mine.id)
    assert wait.criteria == f"task {other.id} reaches COMPLETED"
    await set_status(tasks, other.id, task_pb2.TASK_STATUS_EXECUTING)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    await set_status(tasks, other.id, task_pb2.TASK_STATUS_COMPLETED)
    done = await ended(waits, wait.id)
    assert done.status == RESOLVED and done.result == f"task {other.id} reached COMPLETED"
    assert (await wait_messages(tasks, mine.id))[-1].startswith("[Wait resolved] task ")


async def test_a_task_status_already_reached_resolves_at_once_and_an_unreachable_one_fails(
        rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    other = await new_task(tasks)
    already = await create(waits, wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
        task_id=other.id, statuses=[task_pb2.TASK_STATUS_PENDING])))
    assert already.status == RESOLVED
    hopeless = await create(waits, wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
        task_id=other.id, statuses=[task_pb2.TASK_STATUS_COMPLETED])))
    await set_status(tasks, other.id, task_pb2.TASK_STATUS_FAILED)
    done = await ended(waits, hopeless.id)
    assert done.status == FAILED and "can no longer reach COMPLETED" in done.result


async def test_a_task_status_wait_times_out(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    other = await new_task(tasks)
    wait = await create(waits, wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
        task_id=other.id, statuses=[task_pb2.TASK_STATUS_COMPLETED])), timeout=seconds(0.5))
    assert (await ended(waits, wait.id)).status == TIMED_OUT


# --- event --------------------------------------------------------------------------------------

async def test_an_event_wait_resolves_on_a_matching_payload_only(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    value = struct_pb2.Value(string_value="TASK_STATUS_SYNTHESIZING")
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
        task_id=task.id, type=event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED, payload_field="to", payload_value=value))
    wait = await create(waits, target, task_id=task.id)
    await set_status(tasks, task.id, task_pb2.TASK_STATUS_EXECUTING)
    await asyncio.sleep(0.3)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    await set_status(tasks, task.id, task_pb2.TASK_STATUS_SYNTHESIZING)
    done = await ended(waits, wait.id)
    assert done.status == RESOLVED and done.result.startswith("event TASK_STATUS_CHANGED (cursor ")


async def test_an_event_wait_ignores_the_messages_its_own_creation_wrote(
        rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(task_id=task.id, type=event_pb2.EVENT_TYPE_MESSAGE_POSTED))
    wait = await create(waits, target, task_id=task.id, timeout=seconds(1))
    await asyncio.sleep(0.3)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    await tasks.PostMessage(tpb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="hi"))
    assert (await ended(waits, wait.id)).status == RESOLVED


async def test_an_event_wait_times_out(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    target = wait_pb2.WaitTarget(event=wait_pb2.EventTarget(task_id=task.id, type=event_pb2.EVENT_TYPE_PLAN_REPLACED))
    wait = await create(waits, target, timeout=seconds(0.5))
    assert (await ended(waits, wait.id)).status == TIMED_OUT


# --- http ---------------------------------------------------------------------------------------

async def test_an_http_wait_resolves_once_the_url_answers_as_expected(
        rpc: tuple[TaskServiceStub, WaitServiceStub], http_site: Any) -> None:
    tasks, waits = rpc
    base, routes = http_site
    routes["/ci"] = (503, b"running", {})
    task = await new_task(tasks)
    target = wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{base}/ci", body_contains="green"))
    wait = await create(waits, target, task_id=task.id, criteria="CI green", poll_interval=POLL)
    assert wait.poll_interval == POLL
    await asyncio.sleep(0.5)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    routes["/ci"] = (200, b"pipeline green", {})
    done = await ended(waits, wait.id)
    assert done.status == RESOLVED and done.result == "HTTP 200 containing 'green'"
    assert (await wait_messages(tasks, task.id))[-1] == "[Wait resolved] CI green → HTTP 200 containing 'green'"


async def test_an_http_wait_times_out_with_its_last_observation(
        rpc: tuple[TaskServiceStub, WaitServiceStub], http_site: Any) -> None:
    _, waits = rpc
    base, routes = http_site
    routes["/never"] = (500, b"down", {})
    wait = await create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{base}/never")),
                        timeout=seconds(1), poll_interval=POLL)
    done = await ended(waits, wait.id)
    assert done.status == TIMED_OUT and done.result == "no outcome within 1s; last check: HTTP 500"


async def test_an_http_look_reads_at_most_one_mib_of_the_body(
        rpc: tuple[TaskServiceStub, WaitServiceStub], http_site: Any) -> None:
    _, waits = rpc
    base, routes = http_site
    routes["/within"] = (200, b"x" * (1024 * 1024 - 6) + b"NEEDLE", {})
    routes["/beyond"] = (200, b"x" * (1024 * 1024) + b"NEEDLE", {})
    within = await create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{base}/within",
                                                                             body_contains="NEEDLE")),
                          poll_interval=POLL)
    beyond = await create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{base}/beyond",
                                                                             body_contains="NEEDLE")),
                          timeout=seconds(1.5), poll_interval=POLL)
    assert (await ended(waits, within.id)).status == RESOLVED
    done = await ended(waits, beyond.id)
    assert done.status == TIMED_OUT and done.result.endswith("last check: HTTP 200")


async def test_an_http_redirect_is_followed_to_the_same_host_only(
        rpc: tuple[TaskServiceStub, WaitServiceStub], http_site: Any) -> None:
    _, waits = rpc
    base, routes = http_site
    routes["/same"] = (302, b"", {"Location": "/ok"})
    routes["/ok"] = (200, b"ok", {})
    routes["/elsewhere"] = (302, b"", {"Location": "http://example.invalid/ok"})
    same = await create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{base}/same")), poll_interval=POLL)
    assert (await ended(waits, same.id)).result == "HTTP 200"
    elsewhere = await create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(
        url=f"{base}/elsewhere", expect_status=302)), poll_interval=POLL)
    assert (await ended(waits, elsewhere.id)).result == "HTTP 302"


async def test_an_http_target_outside_the_allow_list_is_invalid(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    _, waits = rpc
    for url in ("http://example.com/health", "http://10.0.0.1/", "file:///etc/passwd"):
        await expect_error(create(waits, wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=url))), INVALID,
                           "ERROR_REASON_INVALID_FIELD", "target.http.url")


# --- file ---------------------------------------------------------------------------------------

async def test_a_file_wait_resolves_when_the_file_contains_the_text(
        rpc: tuple[TaskServiceStub, WaitServiceStub], tmp_path: Path) -> None:
    tasks, waits = rpc
    task = await new_task(tasks, workspace=str(tmp_path))
    target = wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="out/result.txt", contains="DONE"))
    wait = await create(waits, target, task_id=task.id, poll_interval=POLL)
    assert wait.criteria == "out/result.txt contains 'DONE'"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "result.txt").write_text("working...")
    await asyncio.sleep(0.5)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    (tmp_path / "out" / "result.txt").write_text("working... DONE")
    done = await ended(waits, wait.id)
    assert done.status == RESOLVED and done.result == "out/result.txt contains 'DONE'"


async def test_a_file_wait_times_out(rpc: tuple[TaskServiceStub, WaitServiceStub], tmp_path: Path) -> None:
    tasks, waits = rpc
    task = await new_task(tasks, workspace=str(tmp_path))
    wait = await create(waits, wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="never.txt")), task_id=task.id,
                        timeout=seconds(0.5), poll_interval=POLL)
    done = await ended(waits, wait.id)
    assert done.status == TIMED_OUT and done.result.endswith("last check: never.txt does not exist")


async def test_a_file_target_outside_the_workspace_is_invalid(
        rpc: tuple[TaskServiceStub, WaitServiceStub], tmp_path: Path) -> None:
    tasks, waits = rpc
    task = await new_task(tasks, workspace=str(tmp_path))
    for path in ("../outside.txt", "/etc/passwd", "a/../../b"):
        await expect_error(create(waits, wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=path)), task_id=task.id),
                           INVALID, "ERROR_REASON_INVALID_FIELD", "target.file.path")
    no_workspace = await new_task(tasks)
    await expect_error(create(waits, wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="x")),
                              task_id=no_workspace.id), INVALID, "ERROR_REASON_INVALID_FIELD", "target.file.path")


async def test_a_symlink_out_of_the_workspace_fails_the_wait(
        rpc: tuple[TaskServiceStub, WaitServiceStub], tmp_path: Path) -> None:
    tasks, waits = rpc
    workspace = tmp_path / "ws"
    workspace.mkdir()
    task = await new_task(tasks, workspace=str(workspace))
    wait = await create(waits, wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="escape/hostname")),
                        task_id=task.id, poll_interval=POLL)
    os.symlink("/etc", workspace / "escape")  # after creation, which refuses a link that is already there
    done = await ended(waits, wait.id)
    assert done.status == FAILED and "outside the workspace" in done.result


# --- external, cancel, forced resolution ------------------------------------------------------

async def test_an_external_wait_is_resolved_by_a_caller(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    wait = await create(waits, external("release manager"), task_id=task.id, criteria="release approved")
    await asyncio.sleep(0.3)
    assert (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait.status == WAITING
    resolved = (await waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="approved by alex"))).wait
    assert resolved.status == RESOLVED and not resolved.forced
    assert (await wait_messages(tasks, task.id))[-1] == "[Wait resolved] release approved → approved by alex"
    rejected = await create(waits, external(), task_id=task.id)
    failed = (await waits.ResolveWait(pb.ResolveWaitRequest(wait_id=rejected.id, result="rejected",
                                                            status=FAILED))).wait
    assert failed.status == FAILED
    metadata = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata
    assert metadata["last_wait_state"] == "error" and list(metadata["active_wait_ids"]) == []
    await expect_error(waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="again")),
                       grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_FAILED_PRECONDITION")


async def test_an_external_wait_times_out(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    _, waits = rpc
    wait = await create(waits, external(), timeout=seconds(0.5))
    assert (await ended(waits, wait.id)).status == TIMED_OUT


async def test_cancel_ends_a_wait_once_and_says_so_in_the_task(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    wait = await create(waits, timer(60), task_id=task.id)
    cancelled = (await waits.CancelWait(pb.CancelWaitRequest(wait_id=wait.id, reason="plan changed"))).wait
    assert cancelled.status == CANCELLED and cancelled.result == "plan changed"
    assert (await wait_messages(tasks, task.id))[-1] == "[Wait cancelled] timer 1m → plan changed"
    assert (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata["last_wait_state"] == "cancelled"
    await expect_error(waits.CancelWait(pb.CancelWaitRequest(wait_id=wait.id)),
                       grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_FAILED_PRECONDITION")
    await expect_error(waits.CancelWait(pb.CancelWaitRequest(wait_id="wai_missing")),
                       grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


async def test_forcing_a_timer_needs_an_admin_key(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    _, waits = rpc
    wait = await create(waits, timer(60))
    await expect_error(waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="skip it")),
                       grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ADMIN_REQUIRED", "wait_id")
    forced = (await waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="skip it"),
                                      metadata=[("authorization", f"Bearer {ADMIN_KEY}")])).wait
    assert forced.status == RESOLVED and forced.forced


async def test_forcing_without_configured_admin_keys_names_the_setting(channel: grpc.aio.Channel) -> None:
    waits = WaitServiceStub(channel)
    wait = await create(waits, timer(60))
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="now"))
    assert_rpc_error(raised.value, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")
    await waits.CancelWait(pb.CancelWaitRequest(wait_id=wait.id))


# --- WatchWait, ListWaits, validation -----------------------------------------------------------

async def test_two_clients_watch_the_same_wait_to_its_end(rpc: tuple[TaskServiceStub, WaitServiceStub],
                                                          wait_server: ServerProcess) -> None:
    _, waits = rpc
    wait = await create(waits, external())

    async def watch() -> list[int]:
        async with grpc.aio.insecure_channel(wait_server.address) as channel:
            stream = WaitServiceStub(channel).WatchWait(pb.WatchWaitRequest(wait_id=wait.id))
            return [response.wait.status async for response in stream]

    watchers = [asyncio.create_task(watch()) for _ in range(2)]
    await asyncio.sleep(0.5)
    await waits.ResolveWait(pb.ResolveWaitRequest(wait_id=wait.id, result="done"))
    seen = await asyncio.wait_for(asyncio.gather(*watchers), HANG_GUARD_SECONDS)
    assert seen == [[WAITING, RESOLVED], [WAITING, RESOLVED]]
    again = [r.wait async for r in waits.WatchWait(pb.WatchWaitRequest(wait_id=wait.id))]
    assert [w.status for w in again] == [RESOLVED] and again[0].result == "done"


async def test_list_waits_filters_by_task_and_status_and_pages(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    tasks, waits = rpc
    task = await new_task(tasks)
    made = [await create(waits, external(), task_id=task.id) for _ in range(5)]
    await waits.CancelWait(pb.CancelWaitRequest(wait_id=made[0].id))
    seen, token = [], ""
    while True:
        page = await waits.ListWaits(pb.ListWaitsRequest(task_id=task.id, page_size=2, page_token=token))
        seen.extend(w.id for w in page.waits)
        token = page.next_page_token
        if not token:
            break
    assert seen == [w.id for w in reversed(made)]
    open_ones = await waits.ListWaits(pb.ListWaitsRequest(task_id=task.id, statuses=[WAITING]))
    assert [w.id for w in open_ones.waits] == [w.id for w in reversed(made[1:])]
    assert not (await waits.ListWaits(pb.ListWaitsRequest(task_id="tsk_nothing"))).waits
    for wait in made[1:]:
        await waits.CancelWait(pb.CancelWaitRequest(wait_id=wait.id))


async def test_bad_wait_requests_name_the_field(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    _, waits = rpc
    await expect_error(waits.CreateWait(pb.CreateWaitRequest()), INVALID, "ERROR_REASON_INVALID_FIELD", "target")
    await expect_error(create(waits, timer(0)), INVALID, "ERROR_REASON_INVALID_FIELD", "target.timer.duration")
    await expect_error(create(waits, wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(task_id="tsk_x"))),
                       INVALID, "ERROR_REASON_INVALID_FIELD", "target.task_status.statuses")
    await expect_error(create(waits, wait_pb2.WaitTarget(event=wait_pb2.EventTarget(task_id="tsk_x"))),
                       INVALID, "ERROR_REASON_INVALID_FIELD", "target.event.type")
    await expect_error(create(waits, timer(1), timeout=seconds(-1)), INVALID, "ERROR_REASON_INVALID_FIELD",
                       "timeout")
    await expect_error(create(waits, external(), task_id="tsk_missing"), grpc.StatusCode.NOT_FOUND,
                       "ERROR_REASON_NOT_FOUND")
    await expect_error(create(waits, wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
        task_id="tsk_missing", statuses=[task_pb2.TASK_STATUS_COMPLETED]))), grpc.StatusCode.NOT_FOUND,
        "ERROR_REASON_NOT_FOUND")
    await expect_error(waits.ResolveWait(pb.ResolveWaitRequest(wait_id="wai_x")), INVALID,
                       "ERROR_REASON_INVALID_FIELD", "result")


async def test_a_retried_create_wait_makes_one_wait(rpc: tuple[TaskServiceStub, WaitServiceStub]) -> None:
    _, waits = rpc
    request = pb.CreateWaitRequest(target=external(), request_id="wait-once-1")
    first, second = (await waits.CreateWait(request)).wait, (await waits.CreateWait(request)).wait
    assert first == second
    await waits.CancelWait(pb.CancelWaitRequest(wait_id=first.id))


# --- restarts -----------------------------------------------------------------------------------

async def test_waits_resume_after_a_restart_and_expired_timers_time_out(
        fresh_server: ServerProcess, tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"  # not the database's folder, which file waits never read
    workspace.mkdir()
    fresh_server.env.update({**FAST_POLLS, "TASKMEM_WAIT_FILE_ROOTS": f"default={workspace}"})
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
        task = await new_task(tasks, workspace=str(workspace))
        survivor = await create(waits, timer(12), task_id=task.id, criteria="survives")  # outlasts a slow restart
        polled = await create(waits, wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="flag")), task_id=task.id,
                              poll_interval=POLL)
        expiring = await create(waits, timer(1), task_id=task.id, criteria="due while down")
    fresh_server.stop()
    time.sleep(1.5)  # the 1 s timer comes due while the server is down
    (workspace / "flag").write_text("")
    fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
        expired = (await waits.GetWait(pb.GetWaitRequest(wait_id=expiring.id))).wait
        assert expired.status == TIMED_OUT and "while the server was down" in expired.result
        assert (await ended(waits, polled.id)).status == RESOLVED
        resumed = await ended(waits, survivor.id)
        assert resumed.status == RESOLVED and resumed.result == "12s elapsed"
        lateness = resumed.end_time.ToMicroseconds() - resumed.create_time.ToMicroseconds() - 12_000_000
        assert 0 <= lateness < 2_000_000
        messages = await wait_messages(tasks, task.id)
        assert any(m.startswith("[Wait timed out] due while down → timer was due while the server was down")
                   for m in messages)
        assert "[Wait resolved] survives → 12s elapsed" in messages
        metadata = (await tasks.GetTask(tpb.GetTaskRequest(task_id=task.id))).task.metadata
        assert list(metadata["active_wait_ids"]) == []
