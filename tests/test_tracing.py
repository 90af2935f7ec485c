"""`--otlp-endpoint`: each RPC becomes a span exported over OTLP/gRPC, here to a collector the test runs."""

from __future__ import annotations

import threading
from concurrent import futures
from pathlib import Path

import grpc
import pytest

pytest.importorskip("opentelemetry.instrumentation.grpc")

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc  # noqa: E402

from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402


class Collector(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self) -> None:
        self.spans: list[str] = []
        self.lock = threading.Lock()

    def Export(self, request: trace_service_pb2.ExportTraceServiceRequest,  # noqa: N802 (the proto's name)
               context: grpc.ServicerContext) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            self.spans.extend(span.name for resource in request.resource_spans
                              for scope in resource.scope_spans for span in scope.spans)
        return trace_service_pb2.ExportTraceServiceResponse()


async def test_every_rpc_is_a_span_sent_to_the_otlp_endpoint(tmp_path: Path) -> None:
    collector = Collector()
    otlp = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(collector, otlp)
    port = otlp.add_insecure_port("127.0.0.1:0")
    otlp.start()
    server = ServerProcess(tmp_path / "taskmem.db", "--otlp-endpoint", f"http://127.0.0.1:{port}")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            stub = TaskServiceStub(channel)
            task = (await stub.CreateTask(pb.CreateTaskRequest(name="traced"))).task
            await stub.GetTask(pb.GetTaskRequest(task_id=task.id))
    finally:
        assert server.stop() == 0  # shutdown flushes the spans still buffered
        otlp.stop(None)
    assert "/taskmem.v1.TaskService/CreateTask" in collector.spans
    assert "/taskmem.v1.TaskService/GetTask" in collector.spans
