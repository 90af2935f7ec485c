"""A call the server refuses or fails lets its request go at once, not at the collector's next full pass.

grpc.aio's abort exception and the call's state reference each other; every frame the exception passed
through lives as long as that cycle. GuardInterceptor aborts with nothing of the request reachable from
there (bench/fuzz_rpcs.py --malloc-stats showed some 40 MiB of refused requests waiting for a full pass).
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.api.admission import Admission
from taskmem.api.interceptors import GuardInterceptor
from taskmem.api.metrics_interceptor import MetricsInterceptor
from taskmem.config import ApiKey, Config
from taskmem.core.errors import InvalidArgument
from taskmem.metrics import Metrics
from taskmem.server import TaskmemServer
from taskmem.settings import AuthSettings
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_pb2
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.server_process import ServerProcess

MARK = "a request that must not outlive its call"


def requests_left_for_the_collector(kind: type = tpb.CreateTaskRequest, field: str = "name") -> int:
    """Marked requests (`field` is MARK) that only a full collection would free (reachable from nothing but
    a cycle)."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return sum(1 for thing in gc.garbage if isinstance(thing, kind) and getattr(thing, field) == MARK)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


@pytest.fixture
def collector_paused() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def refused(call: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        if isinstance(call, grpc.aio.UnaryStreamCall):
            async for _ in call:
                pass
        else:
            await call
    return raised.value.code()


@pytest.mark.parametrize("api_keys", [(), (ApiKey("the-key", ("default",)),)], ids=["open", "keyed"])
@pytest.mark.parametrize("metrics", [False, True], ids=["guard", "metrics-and-guard"])
async def test_a_failed_or_refused_call_leaves_its_request_to_no_reference_cycle(
        collector_paused: None, api_keys: tuple[ApiKey, ...], metrics: bool) -> None:
    async def invalid(request: tpb.CreateTaskRequest, context: grpc.aio.ServicerContext) -> bytes:
        raise InvalidArgument("name", "refused")

    async def defect(request: tpb.CreateTaskRequest, context: grpc.aio.ServicerContext) -> bytes:
        raise ZeroDivisionError("a defect")

    async def invalid_stream(request: tpb.CreateTaskRequest, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        yield b""
        raise InvalidArgument("name", "refused")

    parse = tpb.CreateTaskRequest.FromString
    handlers = grpc.method_handlers_generic_handler("taskmem.v1.Probe", {
        "Invalid": grpc.unary_unary_rpc_method_handler(invalid, request_deserializer=parse),
        "Defect": grpc.unary_unary_rpc_method_handler(defect, request_deserializer=parse),
        "InvalidStream": grpc.unary_stream_rpc_method_handler(invalid_stream, request_deserializer=parse),
    })
    interceptors: list[grpc.aio.ServerInterceptor] = [GuardInterceptor(AuthSettings.of(Config(api_keys=api_keys)),
                                                                       Admission(64, 100, 20.0))]
    if metrics:  # outermost, as server.py puts it with --metrics-listen
        interceptors.insert(0, MetricsInterceptor(Metrics()))
    server = grpc.aio.server(interceptors=interceptors)
    server.add_generic_rpc_handlers([handlers])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    request = tpb.CreateTaskRequest(name=MARK, goal="x" * 100_000).SerializeToString()
    metadata = (("authorization", "Bearer the-key"),) if api_keys else ()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as opened:
            codes = [await refused(opened.unary_unary(f"/taskmem.v1.Probe/{name}")(request, metadata=metadata))
                     for name in ("Invalid", "Defect")]
            codes.append(await refused(opened.unary_stream("/taskmem.v1.Probe/InvalidStream")(request,
                                                                                            metadata=metadata)))
            if api_keys:  # refused before any handler runs
                codes.append(await refused(opened.unary_unary("/taskmem.v1.Probe/Invalid")(request)))
    finally:
        await server.stop(None)
    assert codes == [grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT,
                     *([grpc.StatusCode.UNAUTHENTICATED] if api_keys else [])]
    assert requests_left_for_the_collector() == 0


async def test_a_wait_forced_without_an_admin_key_leaves_its_request_to_no_reference_cycle(
        collector_paused: None, tmp_path: Path) -> None:
    """ResolveWait's own refusal (PERMISSION_DENIED, raised by the servicer after reading the wait) goes the
    same way as the interceptor's, on the whole server as it runs."""
    database = ServerProcess(tmp_path / "taskmem.db").database_setting
    server = TaskmemServer(dataclasses.replace(Config(), database=database, listen="127.0.0.1:0",
                                               admin_keys=("the-admin-key",)))
    address = await server.start()
    try:
        async with grpc.aio.insecure_channel(address) as opened:
            tasks, waits = TaskServiceStub(opened), WaitServiceStub(opened)
            task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="forced"))).task
            timer = wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=duration_pb2.Duration(seconds=3600)))
            wait = (await waits.CreateWait(wpb.CreateWaitRequest(task_id=task.id, criteria="later", target=timer))).wait
            # Sent as bytes: only the server's parsed copies are counted, not a client-side message.
            resolve = opened.unary_unary("/taskmem.v1.WaitService/ResolveWait")
            request = wpb.ResolveWaitRequest(wait_id=wait.id, result=MARK).SerializeToString()
            codes = [await refused(resolve(request)) for _ in range(3)]
    finally:
        await server.stop()
    assert codes == [grpc.StatusCode.PERMISSION_DENIED] * 3
    assert requests_left_for_the_collector(wpb.ResolveWaitRequest, "result") == 0
