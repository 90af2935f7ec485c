"""The server as a process: restarts, SIGKILL, graceful shutdown, resuming subscriptions."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS


def post(task_id: str, content: str) -> pb.PostMessageRequest:
    return pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=content)


async def test_data_survives_a_restart(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        created = await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(
            name="persist", plan=[task_pb2.PlanItemSpec(id="a", title="A")]))
    fresh_server.restart()
    async with grpc.aio.insecure_channel(address) as channel:
        fetched = await TaskServiceStub(channel).GetTask(pb.GetTaskRequest(task_id=created.task.id))
    assert fetched.task == created.task and fetched.plan == created.plan


async def test_sigkill_during_a_burst_loses_no_acknowledged_write(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    acknowledged: list[str] = []
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="burst"))).task.id

        async def writer(n: int) -> None:
            for i in range(10_000):
                try:
                    response = await tasks.PostMessage(post(task_id, f"{n}-{i}"))
                except grpc.aio.AioRpcError:
                    return
                acknowledged.append(response.message.id)

        writers = [asyncio.create_task(writer(n)) for n in range(16)]
        while len(acknowledged) < 300:
            await asyncio.sleep(0.01)
        fresh_server.stop(signal.SIGKILL)
        await asyncio.gather(*writers)
    fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        stored: set[str] = set()
        token = ""
        while True:
            page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=500, page_token=token))
            stored.update(m.id for m in page.messages)
            token = page.next_page_token
            if not token:
                break
    assert len(acknowledged) >= 300
    assert set(acknowledged) <= stored


async def test_a_subscription_resumed_from_its_last_cursor_sees_every_event_once(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="resume"))).task.id
        total = 200
        received: list[int] = []
        contents: list[str] = []

        async def writes() -> None:
            for i in range(total):
                await tasks.PostMessage(post(task_id, str(i)))
                if i % 20 == 0:
                    await asyncio.sleep(0.01)

        writing = asyncio.create_task(writes())
        cursor = 0
        while len(contents) < total:
            # read a few events, then drop the stream and resume from the last cursor seen
            stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[task_id], after_cursor=cursor))
            async for response in stream:
                event = response.event
                if event.type == 9:  # MESSAGE_POSTED
                    contents.append(event.payload["content"])
                received.append(event.cursor)
                cursor = event.cursor
                if len(received) % 17 == 0 or len(contents) == total:
                    break
            stream.cancel()
        await writing
    assert contents == [str(i) for i in range(total)]
    assert received == sorted(set(received))


async def test_sigterm_shuts_down_gracefully(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    async with grpc.aio.insecure_channel(address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        status = await health.Check(health_pb2.HealthCheckRequest(service="taskmem.v1.TaskService"))
        assert status.status == health_pb2.HealthCheckResponse.SERVING
        stream = TaskServiceStub(channel).SubscribeEvents(pb.SubscribeEventsRequest(after_cursor=-1))
        reading = asyncio.ensure_future(stream.read())
        await asyncio.sleep(0.3)
        assert fresh_server.stop(signal.SIGTERM) == 0
        try:
            await asyncio.wait_for(reading, HANG_GUARD_SECONDS)
        except grpc.aio.AioRpcError as error:
            assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "Traceback" not in "".join(fresh_server.output)


def test_a_port_in_use_is_refused_in_one_line_naming_the_address(server: ServerProcess, tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "taskmem", "serve", "--listen", server.address,
                             "--database", str(tmp_path / "second.db")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("taskmem:")]
    assert lines == [f"taskmem: listen: cannot listen on {server.address}: the address is in use or not available "
                     "on this machine"]
    assert "Traceback" not in result.stderr


async def test_a_quiet_subscription_pinged_every_two_seconds_stays_open(server: ServerProcess) -> None:
    # A client keepalive of 2 s (common in grpc-js setups) is within min_ping_interval_ms: no too_many_pings.
    options = [("grpc.keepalive_time_ms", 2_000), ("grpc.keepalive_permit_without_calls", 1),
               ("grpc.http2.max_pings_without_data", 0), ("grpc.http2.min_time_between_pings_ms", 1_000),
               ("grpc.http2.min_ping_interval_without_data_ms", 1_000)]
    async with grpc.aio.insecure_channel(server.address, options=options) as channel:
        stub = TaskServiceStub(channel)
        stream = stub.SubscribeEvents(pb.SubscribeEventsRequest(after_cursor=-1))
        await asyncio.sleep(11)  # five pings; with the old 10 s minimum the third strike ended the stream
        created = await stub.CreateTask(pb.CreateTaskRequest(name="after the pings"))
        while True:
            reply = await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
            if reply.event.task_id == created.task.id:
                break
        stream.cancel()
