"""The allow-lists of webhooks and http waits check ports and the addresses names resolve to, end to end:
a listed name that resolves to loopback (`localhost`) is not reached, a listed literal address and port
is, and a port nobody listed is refused with an error that says so."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import wait_pb2, webhook_pb2
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.ports import unused_port
from tests.support.server_process import ServerProcess
from tests.support.webhook_receiver import WebhookReceiver

FAST = {"TASKMEM_WEBHOOK_BACKOFF_INITIAL_SECONDS": "0.2", "TASKMEM_WEBHOOK_BACKOFF_MAX_SECONDS": "0.5",
        "TASKMEM_WEBHOOK_RETRY_PERIOD_SECONDS": "120", "TASKMEM_WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2",
        "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1"}
POLL = duration_pb2.Duration(nanos=100_000_000)


class _Secret(http.server.BaseHTTPRequestHandler):
    """An internal page a wait must not be able to read through a listed name."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = b"internal: token=s3cr3t"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def internal_port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Secret)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


async def _eventually(check: Callable[[], Awaitable[Any]], what: str, timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (found := await check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
    return found


async def _first_delivery(stub: TaskServiceStub, task_id: str) -> webhook_pb2.WebhookDelivery:
    async def found() -> list[webhook_pb2.WebhookDelivery]:
        reply = await stub.ListWebhookDeliveries(pb.ListWebhookDeliveriesRequest(task_id=task_id))
        return [d for d in reply.deliveries if d.attempts >= 1 or d.state != webhook_pb2.WEBHOOK_DELIVERY_STATE_PENDING]
    return (await _eventually(found, f"a delivery attempt for {task_id}"))[0]


async def _hooked_task(tmp_path: Path, receiver: WebhookReceiver, allowed: str,
                       callback_url: str) -> tuple[ServerProcess, webhook_pb2.WebhookDelivery]:
    server = ServerProcess(tmp_path / "taskmem.db", env={**FAST, "TASKMEM_WEBHOOK_ALLOWED_HOSTS": allowed})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            receiver.secret = (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="hooked", callback_url=callback_url))).task
            return server, await _first_delivery(stub, task.id)
    except BaseException:
        server.stop()
        raise


async def test_a_webhook_to_a_listed_name_that_resolves_to_loopback_is_refused(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    # "localhost" (with the receiver's port, and bare as an older server would need) resolves to 127.0.0.1,
    # which is not itself listed.
    server, delivery = await _hooked_task(tmp_path, receiver, f"localhost,localhost:{receiver.port}",
                                          f"http://localhost:{receiver.port}/hook")
    server.stop()
    assert delivery.state != webhook_pb2.WEBHOOK_DELIVERY_STATE_DELIVERED
    assert "127.0.0.1 is a loopback address" in delivery.last_error, delivery.last_error
    assert receiver.requests == 0


async def test_a_webhook_to_a_listed_literal_address_and_port_is_delivered(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    server, delivery = await _hooked_task(tmp_path, receiver, f"127.0.0.1:{receiver.port}", receiver.url)
    server.stop()
    assert delivery.state == webhook_pb2.WEBHOOK_DELIVERY_STATE_DELIVERED, delivery.last_error
    assert receiver.requests >= 1


async def test_a_webhook_to_an_unlisted_port_of_a_listed_host_is_refused_with_a_clear_last_error(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    closed = unused_port()
    server, delivery = await _hooked_task(tmp_path, receiver, f"127.0.0.1,127.0.0.1:{receiver.port}",
                                          f"http://127.0.0.1:{closed}/hook")
    server.stop()
    assert delivery.state != webhook_pb2.WEBHOOK_DELIVERY_STATE_DELIVERED
    assert f"port {closed} is not allowed for 127.0.0.1" in delivery.last_error, delivery.last_error
    assert "webhook_allowed_hosts" in delivery.last_error


async def test_an_http_wait_on_a_listed_name_that_resolves_to_loopback_cannot_read_the_page(
        tmp_path: Path, internal_port: int) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env={
        **FAST, "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": f"localhost,localhost:{internal_port}"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            waits = WaitServiceStub(channel)
            wait = (await waits.CreateWait(wpb.CreateWaitRequest(target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(
                url=f"http://localhost:{internal_port}/", body_contains="token=s")), poll_interval=POLL,
                timeout=duration_pb2.Duration(seconds=15)))).wait

            async def ended() -> wait_pb2.Wait | None:
                got = (await waits.GetWait(wpb.GetWaitRequest(wait_id=wait.id))).wait
                return got if got.status != wait_pb2.WAIT_STATUS_WAITING else None
            done = await ended_wait(ended)
    finally:
        server.stop()
    assert done.status == wait_pb2.WAIT_STATUS_FAILED, (done.status, done.result)
    assert "127.0.0.1 is a loopback address" in done.result


async def ended_wait(check: Callable[[], Awaitable[wait_pb2.Wait | None]]) -> wait_pb2.Wait:
    return await _eventually(check, "the wait to end")


async def test_an_http_wait_on_an_unlisted_port_is_refused_when_created(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env={**FAST, "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": "127.0.0.1"})
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await WaitServiceStub(channel).CreateWait(wpb.CreateWaitRequest(target=wait_pb2.WaitTarget(
                    http=wait_pb2.HttpTarget(url="http://127.0.0.1:22/")), poll_interval=POLL))
    finally:
        server.stop()
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "port 22 is not allowed for 127.0.0.1" in (refused.value.details() or "")
