"""A full disk under a running server: writes refused as RESOURCE_EXHAUSTED / STORAGE_FULL, reads and health
unaffected, nothing acknowledged lost, and writes accepted again once there is room, with no restart.

The disk is made full for the server process alone, without root: its file-size limit (RLIMIT_FSIZE, changed from
outside with prlimit) is set just above the database's files, so SQLite's next write past it fails exactly as on a
full filesystem (a short write: SQLITE_FULL or SQLITE_IOERR_WRITE); lifting the limit is the space coming back.
bench/disk_full_run.py does the same on a real, small tmpfs.
"""

from __future__ import annotations

import asyncio
import resource
import signal
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from taskmem.core.errors import StorageFull
from taskmem.store.postgres.statements import as_storage_full as postgres_full
from taskmem.v1 import event_pb2, memory_pb2, task_pb2, webhook_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support import server_process
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.webhook_receiver import WebhookReceiver
from tests.support.eventually import HANG_GUARD_SECONDS

METRICS_PREFIX = "taskmem: metrics on "
CONTENT = "x" * 8_000  # a message large enough to fill the margin in a few dozen writes
MAX_WRITES = 2_000
START_SECONDS = 120.0  # a start-up on a loaded shared machine  # bounded: the margin is ~256 KiB, so refusals start long before this


def _set_file_size_limit(pid: int, limit: int) -> None:
    _, hard = resource.prlimit(pid, resource.RLIMIT_FSIZE)
    resource.prlimit(pid, resource.RLIMIT_FSIZE, (limit, hard))


def _database_bytes(database: Path) -> int:
    return max(path.stat().st_size for path in database.parent.glob(database.name + "*"))


def _storage_full_counted(server: ServerProcess) -> float:
    url = next(line for line in server.output if line.startswith(METRICS_PREFIX))[len(METRICS_PREFIX):].strip()
    with urllib.request.urlopen(url, timeout=HANG_GUARD_SECONDS) as response:
        text = response.read().decode()
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == "taskmem_storage_full_writes_total")


async def _post(tasks: TaskServiceStub, task_id: str, n: int) -> pb.PostMessageResponse:
    return await tasks.PostMessage(pb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=f"{n} {CONTENT}", request_id=f"write-{n}"))


async def _all_messages(tasks: TaskServiceStub, task_id: str) -> list[task_pb2.Message]:
    listed, token = [], ""
    while True:
        page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=500, page_token=token))
        listed += page.messages
        token = page.next_page_token
        if not token:
            return listed


@pytest.mark.skipif(server_process.ENGINE != "sqlite" or sys.platform != "linux",
                    reason="fills an SQLite file through prlimit (Linux); PostgreSQL's refusal: the unit test below")
async def test_a_full_disk_refuses_writes_clearly_keeps_reads_and_takes_writes_again_when_space_returns(
        tmp_path: Path) -> None:
    database = tmp_path / "taskmem.db"
    server = ServerProcess(database, "--metrics-listen", "127.0.0.1:0")
    server.start(timeout=START_SECONDS)
    try:
        assert server.process is not None
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks = TaskServiceStub(channel)
            task = (await tasks.CreateTask(pb.CreateTaskRequest(name="fill the disk"))).task
            acknowledged: list[str] = []
            _set_file_size_limit(server.process.pid, _database_bytes(database) + 256 * 1024)

            refusals: list[grpc.aio.AioRpcError] = []
            for n in range(MAX_WRITES):
                try:
                    acknowledged.append((await _post(tasks, task.id, n)).message.id)
                except grpc.aio.AioRpcError as error:
                    refusals.append(error)
                    if len(refusals) == 5:  # refused, and refused again while full
                        break
            assert refusals, f"{MAX_WRITES} writes of 8 KB fitted in 256 KiB"
            for error in refusals:
                assert_rpc_error(error, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_STORAGE_FULL")
                assert "no space left" in (error.details() or "")

            # While full: reads answer, health says SERVING, the refusals are counted.
            assert [m.id for m in await _all_messages(tasks, task.id)] == acknowledged
            assert (await tasks.GetTask(pb.GetTaskRequest(task_id=task.id))).task.name == "fill the disk"
            health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
            assert _storage_full_counted(server) >= len(refusals)

            # Space comes back: the very writes that were refused are taken, by the same server.
            _set_file_size_limit(server.process.pid, resource.RLIM_INFINITY)
            retried = len(acknowledged)
            acknowledged.append((await _post(tasks, task.id, retried)).message.id)
            acknowledged.append((await _post(tasks, task.id, retried + 1)).message.id)
            assert [m.id for m in await _all_messages(tasks, task.id)] == acknowledged

        # Killed without a chance to flush anything: every acknowledged write is still there.
        server.stop(signal.SIGKILL)
        server.start(timeout=START_SECONDS)
        async with grpc.aio.insecure_channel(server.address) as channel:
            assert [m.id for m in await _all_messages(TaskServiceStub(channel), task.id)] == acknowledged
    finally:
        server.stop()


def test_postgresql_disk_full_and_could_not_extend_file_are_storage_full() -> None:
    full = postgres_full(psycopg.errors.DiskFull(
        'could not extend file "base/16384/16397": No space left on device\nHINT: Check free disk space.'))
    assert isinstance(full, StorageFull)
    assert full.metadata["detail"] == 'PostgreSQL: could not extend file "base/16384/16397": No space left on device'
    assert isinstance(postgres_full(psycopg.OperationalError("could not write to file: No space left on device")),
                      StorageFull)
    assert postgres_full(psycopg.errors.UniqueViolation("duplicate key")) is None
    assert postgres_full(ValueError("No space left on device")) is None


async def _until(check: Callable[[], Awaitable[bool]], seconds: float = 120.0) -> bool:
    """Poll check until it holds, at most `seconds` (a bound, not a measured speed)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():
            return True
        await asyncio.sleep(0.2)
    return False


@pytest.mark.skipif(server_process.ENGINE != "sqlite" or sys.platform != "linux",
                    reason="fills an SQLite file through prlimit (Linux)")
async def test_background_work_refused_by_a_full_disk_resumes_when_space_returns(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    """Memory entries acknowledged before the disk filled are embedded once there is room, and every event of a
    hooked task is delivered to its webhook with its delivery stored: the embedding backlog and the webhook sender
    met the full disk, paused, and went on when it had room, with no restart."""
    database = tmp_path / "taskmem.db"
    server = ServerProcess(database, env={"TASKMEM_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{receiver.port}",
                                          "TASKMEM_WEBHOOK_BACKOFF_INITIAL_SECONDS": "0.2",
                                          "TASKMEM_WEBHOOK_BACKOFF_MAX_SECONDS": "0.5"})
    server.start(timeout=START_SECONDS)
    try:
        assert server.process is not None
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            receiver.secret = (await tasks.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            receiver.status = 503  # every attempt fails, and each failure is a write the sender must store
            task = (await tasks.CreateTask(pb.CreateTaskRequest(
                name="hooked", callback_url=receiver.url, webhook_event_types=[
                    event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED]))).task
            _set_file_size_limit(server.process.pid, _database_bytes(database) + 256 * 1024)
            acknowledged, refused = [], 0
            for n in range(MAX_WRITES):
                try:
                    added = await memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[mpb.NewMemoryEntry(
                        task_id=task.id, type=memory_pb2.MEMORY_TYPE_DISCOVERY,
                        summary=f"finding number {n} about the flaky invoice test", detail=CONTENT)]))
                    acknowledged += [entry.id for entry in added.entries]
                except grpc.aio.AioRpcError as error:
                    assert_rpc_error(error, grpc.StatusCode.RESOURCE_EXHAUSTED, "ERROR_REASON_STORAGE_FULL")
                    refused += 1
                    if refused == 3:
                        break
            assert refused == 3 and acknowledged
            # Now no write fits at all, however small (a WAL that starts over would take a small one).
            _set_file_size_limit(server.process.pid, 1)

            async def both_paused() -> bool:
                said = "".join(server.output)
                return ("entries wait (the database has no space left" in said
                        and f"webhook delivery of task {task.id} paused" in said)

            assert await _until(both_paused), "".join(server.output)[-3000:]
            _set_file_size_limit(server.process.pid, resource.RLIM_INFINITY)
            receiver.status = 200

            async def all_embedded() -> bool:
                found = await memory.SearchMemories(mpb.SearchMemoriesRequest(
                    query="flaky invoice test", mode=memory_pb2.SEARCH_MODE_SEMANTIC,
                    filter=memory_pb2.MemoryFilter(task_id=task.id), limit=1))
                return found.unembedded_count == 0

            assert await _until(all_embedded)

            events = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task.id], page_size=500))
            cursors = {event.cursor for event in events.events}
            assert len(cursors) == 1 + len(acknowledged)

            async def all_delivered() -> bool:
                delivered = {received.body["cursor"] for received in list(receiver.received)}
                stored = await tasks.ListWebhookDeliveries(pb.ListWebhookDeliveriesRequest(
                    task_id=task.id, page_size=500))
                return cursors <= delivered and {d.cursor for d in stored.deliveries
                                                 if d.state == webhook_pb2.WEBHOOK_DELIVERY_STATE_DELIVERED} >= cursors

            assert await _until(all_delivered)
    finally:
        server.stop()
