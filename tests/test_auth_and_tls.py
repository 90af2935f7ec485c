"""Bearer API keys scoped to namespaces, the loopback rule, and TLS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.certificates import needs_openssl, self_signed_localhost
from tests.support.server_process import ServerProcess


def bearer(key: str, namespace: str = "") -> list[tuple[str, str]]:
    metadata = [("authorization", f"Bearer {key}")]
    return metadata + ([("x-taskmem-namespace", namespace)] if namespace else [])


async def test_keys_see_only_their_own_namespaces(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "t.db", "--api-key", "alpha-key:alpha", "--api-key", "both-key:beta,alpha")
    address = server.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            tasks = TaskServiceStub(channel)
            created = await tasks.CreateTask(pb.CreateTaskRequest(name="alpha task"), metadata=bearer("alpha-key"))
            assert created.task.namespace == "alpha"
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await tasks.GetTask(pb.GetTaskRequest(task_id=created.task.id), metadata=bearer("both-key"))
            assert_rpc_error(raised.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
            seen = await tasks.GetTask(pb.GetTaskRequest(task_id=created.task.id), metadata=bearer("both-key", "alpha"))
            assert seen.task.id == created.task.id
            listed = await tasks.ListTasks(pb.ListTasksRequest(), metadata=bearer("both-key"))
            assert list(listed.tasks) == []
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await tasks.ListTasks(pb.ListTasksRequest(), metadata=bearer("alpha-key", "beta"))
            assert_rpc_error(raised.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_NAMESPACE_DENIED")
            for metadata in ([], bearer("wrong")):
                with pytest.raises(grpc.aio.AioRpcError) as raised:
                    await tasks.ListTasks(pb.ListTasksRequest(), metadata=metadata)
                assert_rpc_error(raised.value, grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_UNAUTHENTICATED")
    finally:
        server.stop()


def test_without_keys_a_non_loopback_address_is_refused_unless_insecure(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "taskmem", "serve", "--listen", "0.0.0.0:0", "--database",
                             str(tmp_path / "t.db")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "--insecure" in result.stderr and "api_keys" in result.stderr


@needs_openssl
async def test_tls_serves_with_the_configured_certificate(tmp_path: Path) -> None:
    cert, key = self_signed_localhost(tmp_path)
    server = ServerProcess(tmp_path / "t.db", "--tls-cert-file", str(cert), "--tls-key-file", str(key))
    address = server.start()
    try:
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        async with grpc.aio.secure_channel(address, credentials) as channel:
            created = await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="over tls"))
        assert created.task.name == "over tls"
    finally:
        server.stop()
