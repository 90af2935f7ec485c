"""Roles per key (reader, writer, admin) from a keys file, applied alike by gRPC, the web view, MCP and A2A."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from taskmem.v1 import task_pb2, task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.key_files import TEAM_KEYS, bearer, secret, write_keys
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess

WEB_PREFIX = "taskmem: web view on "


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    directory = tmp_path_factory.mktemp("roles")
    write_keys(directory / "keys.yaml", TEAM_KEYS)
    server = ServerProcess(directory / "t.db", "--keys-file", str(directory / "keys.yaml"), "--http", "127.0.0.1:0",
                           "--embedding-backend", "none")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def web_url(keyed: ServerProcess) -> str:
    line = next(line for line in keyed.output if line.startswith(WEB_PREFIX))
    return line[len(WEB_PREFIX):].strip()


def web_call(web_url: str, method: str, body: dict[str, Any], key_id: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"{web_url}api/call/TaskService/{method}", data=json.dumps(body).encode(),
                                     headers={"x-taskmem-web": "1", "authorization": f"Bearer {secret(key_id)}",
                                              "content-type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def test_a_reader_reads_but_every_write_is_refused_with_its_role_named(keyed: ServerProcess) -> None:
    async with grpc.aio.insecure_channel(keyed.address) as channel:
        tasks = TaskServiceStub(channel)
        created = (await tasks.CreateTask(pb.CreateTaskRequest(name="shared"), metadata=bearer("agent"))).task
        seen = await tasks.GetTask(pb.GetTaskRequest(task_id=created.id), metadata=bearer("dash"))
        assert seen.task.id == created.id
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await tasks.CreateTask(pb.CreateTaskRequest(name="not mine to make"), metadata=bearer("dash"))
        assert_rpc_error(raised.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ROLE_DENIED")
        assert "reader" in (raised.value.details() or "") and "writer" in (raised.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await tasks.PostMessage(pb.PostMessageRequest(task_id=created.id, content="hi", role=task_pb2.MESSAGE_ROLE_AGENT), metadata=bearer("dash"))
        assert_rpc_error(raised.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ROLE_DENIED")


async def test_a_writer_writes_but_only_an_admin_reads_the_webhook_secret(keyed: ServerProcess) -> None:
    async with grpc.aio.insecure_channel(keyed.address) as channel:
        tasks = TaskServiceStub(channel)
        created = (await tasks.CreateTask(pb.CreateTaskRequest(name="written"), metadata=bearer("agent"))).task
        await tasks.PostMessage(pb.PostMessageRequest(task_id=created.id, content="on it", role=task_pb2.MESSAGE_ROLE_AGENT), metadata=bearer("agent"))
        for refused in ("dash", "agent"):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await tasks.GetWebhookSecret(pb.GetWebhookSecretRequest(), metadata=bearer(refused))
            assert_rpc_error(raised.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ROLE_DENIED")
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await tasks.RotateWebhookSecret(pb.RotateWebhookSecretRequest(), metadata=bearer(refused))
            assert_rpc_error(raised.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ROLE_DENIED")
        assert (await tasks.GetWebhookSecret(pb.GetWebhookSecretRequest(), metadata=bearer("ops"))).secret


def test_the_web_view_refuses_a_readers_action_and_serves_its_reads(keyed: ServerProcess, web_url: str) -> None:
    status, created = web_call(web_url, "ListTasks", {}, "dash")
    assert status == 200, created
    with grpc.insecure_channel(keyed.address) as channel:
        task = TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="from the page"),
                                                   metadata=bearer("agent")).task
    cancel = {"task": {"id": task.id, "status": "TASK_STATUS_CANCELLED"}, "update_mask": "status"}
    status, body = web_call(web_url, "UpdateTask", cancel, "dash")
    assert (status, body["code"]) == (403, "PERMISSION_DENIED"), body
    assert "reader" in body["message"]
    status, body = web_call(web_url, "UpdateTask", cancel, "agent")
    assert status == 200 and body["task"]["status"] == "TASK_STATUS_CANCELLED", body


async def test_mcp_tools_refuse_a_readers_writes_and_record_a_writers_key_and_agent(keyed: ServerProcess) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    import httpx2

    from tests.support.mcp_process import McpHttpProcess

    mcp = McpHttpProcess("--address", keyed.address)
    url = mcp.start()
    try:
        async with httpx2.AsyncClient(headers={"authorization": f"Bearer {secret('dash')}"}) as reader_http:
            async with Client(streamable_http_client(url, http_client=reader_http)) as client:
                refused = await client.call_tool("task_register", {"name": "not for a reader"})
                assert refused.is_error and "PERMISSION_DENIED" in refused.content[0].text  # type: ignore[union-attr]
                listed = await client.call_tool("task_list", {})
                assert not listed.is_error, listed.content[0].text  # type: ignore[union-attr]
        headers = {"authorization": f"Bearer {secret('agent')}", "x-taskmem-agent": "mcp-planner"}
        async with httpx2.AsyncClient(headers=headers) as writer_http:
            async with Client(streamable_http_client(url, http_client=writer_http)) as client:
                registered = await client.call_tool("task_register", {"name": "a writer's task"})
                text = registered.content[0].text  # type: ignore[union-attr]
                assert not registered.is_error, text
    finally:
        mcp.stop()
    task_id = re.search(r"tsk_\w+", text).group(0)  # type: ignore[union-attr]
    async with grpc.aio.insecure_channel(keyed.address) as channel:
        events = await TaskServiceStub(channel).ListEvents(pb.ListEventsRequest(task_ids=[task_id]),
                                                           metadata=bearer("dash"))
    assert {(event.key_id, event.agent_id) for event in events.events} == {("agent", "mcp-planner")}


async def test_a2a_refuses_a_readers_cancel_and_lets_a_writer_cancel(keyed: ServerProcess) -> None:
    pytest.importorskip("a2a")
    from a2a.client import ClientConfig, create_client
    from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest
    from a2a.utils.errors import A2AError

    from tests.a2a.agent_process import AgentProcess

    front_end = AgentProcess(keyed.address, front_end=True)
    front_end.start()
    try:
        async with grpc.aio.insecure_channel(keyed.address) as channel:
            tasks = TaskServiceStub(channel)
            created = (await tasks.CreateTask(pb.CreateTaskRequest(name="long job"), metadata=bearer("agent"))).task
            await tasks.UpdateTask(pb.UpdateTaskRequest(
                task=task_pb2.Task(id=created.id, status=task_pb2.TASK_STATUS_EXECUTING),
                update_mask={"paths": ["status"]}), metadata=bearer("agent"))

        async def client_of(key_id: str) -> Any:
            http = httpx.AsyncClient(headers={"authorization": f"Bearer {secret(key_id)}",
                                              "x-taskmem-namespace": "alpha"})
            return await create_client(front_end.url, ClientConfig(streaming=False, httpx_client=http))

        reader = await client_of("dash")
        assert (await reader.get_task(GetTaskRequest(id=created.id))).id == created.id
        # A2A has no permission error of its own: the refusal arrives as an error carrying taskmem's code.
        with pytest.raises(A2AError, match="PERMISSION_DENIED: this key's role is reader"):
            await reader.cancel_task(CancelTaskRequest(id=created.id))
        writer = await client_of("agent")
        cancelled = await writer.cancel_task(CancelTaskRequest(id=created.id))
        assert cancelled.id == created.id
    finally:
        front_end.stop()
