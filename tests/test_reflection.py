"""Reflection serves the documented contract over v1 and v1alpha, so grpcurl shows what each RPC does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2 as rpb

from tests.support.server_process import ServerProcess

GRPCURL = Path(__file__).resolve().parents[1] / ".tools" / "bin" / "grpcurl"


def grpcurl(*args: str) -> str:
    result = subprocess.run([str(GRPCURL), "-plaintext", *args], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_grpcurl_describe_prints_each_rpc_with_its_comment(server: ServerProcess) -> None:
    described = grpcurl(server.address, "describe", "taskmem.v1.TaskService")
    assert "// Creates a task" in described
    assert "// duplicate between the two. To resume after a broken stream" in described  # SubscribeEvents


def test_grpcurl_describe_documents_a_message_field(server: ServerProcess) -> None:
    described = grpcurl(server.address, "describe", "taskmem.v1.CreateTaskRequest")
    assert "//" in described.split("message CreateTaskRequest")[1]


async def reflect(address: str, service: str,
                  request: rpb.ServerReflectionRequest | None) -> rpb.ServerReflectionResponse:
    """The first answer to request; with None nothing is sent, so a server that refuses the call answers with
    its own status (a request written as it refuses fails on the client as INTERNAL instead)."""
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(f"/{service}/ServerReflectionInfo",
                                     request_serializer=rpb.ServerReflectionRequest.SerializeToString,
                                     response_deserializer=rpb.ServerReflectionResponse.FromString)
        stream = call(iter([request] if request is not None else []))
        return await stream.read()


async def test_reflection_v1_lists_services_and_returns_documented_files(server: ServerProcess) -> None:
    listed = await reflect(server.address, "grpc.reflection.v1.ServerReflection",
                           rpb.ServerReflectionRequest(list_services=""))
    names = {service.name for service in listed.list_services_response.service}
    assert {"taskmem.v1.TaskService", "taskmem.v1.MemoryService", "grpc.health.v1.Health"} <= names
    found = await reflect(server.address, "grpc.reflection.v1.ServerReflection",
                          rpb.ServerReflectionRequest(file_containing_symbol="taskmem.v1.WaitService.CreateWait"))
    files = [descriptor_pb2.FileDescriptorProto.FromString(raw)
             for raw in found.file_descriptor_response.file_descriptor_proto]
    assert files[0].name == "taskmem/v1/wait_service.proto"
    # grpcurl's printer sorts RPCs by name; reflection itself keeps the contract's order.
    assert [method.name for method in files[0].service[0].method][:2] == ["CreateWait", "GetWait"]
    assert any(location.leading_comments for location in files[0].source_code_info.location)
    assert "taskmem/v1/wait.proto" in {file.name for file in files}  # its imports come along


async def test_reflection_answers_an_unknown_symbol_with_not_found(server: ServerProcess) -> None:
    answer = await reflect(server.address, "grpc.reflection.v1alpha.ServerReflection",
                           rpb.ServerReflectionRequest(file_containing_symbol="taskmem.v1.NoSuchThing"))
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]


async def test_with_api_keys_reflection_and_health_answer_without_a_key_unless_reflection_is_off(
        tmp_path: Path) -> None:
    """Discovery and probes need no key (documented); `reflection: false` turns reflection off, health stays."""
    keyed = ServerProcess(tmp_path / "open.db", "--api-key", "k")
    closed = ServerProcess(tmp_path / "closed.db", "--api-key", "k", env={"TASKMEM_REFLECTION": "false"})
    for process in (keyed, closed):
        process.start()
    try:
        listed = await reflect(keyed.address, "grpc.reflection.v1.ServerReflection",
                               rpb.ServerReflectionRequest(list_services=""))
        assert "taskmem.v1.TaskService" in {service.name for service in listed.list_services_response.service}
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await reflect(closed.address, "grpc.reflection.v1.ServerReflection", None)
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        for process in (keyed, closed):
            async with grpc.aio.insecure_channel(process.address) as channel:
                health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        for process in (keyed, closed):
            process.stop()
