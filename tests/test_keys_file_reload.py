"""Keys without restarts: the server re-reads its keys file as it changes. A removed key is refused by every
front door and each open stream of it is ended; a broken file leaves the keys as they were. (How fast is
measured by bench/trust_probe.py, never here: these tests wait with generous guards.)"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.key_files import TEAM_KEYS, bearer, secret, write_keys
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

WEB_PREFIX = "taskmem: web view on "
# Guards against a hang, far beyond the reload interval: the tests never judge speed.


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[ServerProcess, Path]]:
    keys = tmp_path / "keys.yaml"
    write_keys(keys, TEAM_KEYS)
    server = ServerProcess(tmp_path / "t.db", "--keys-file", str(keys), "--http", "127.0.0.1:0",
                           "--embedding-backend", "none")
    server.start()
    yield server, keys
    server.stop()


def web_status(server: ServerProcess, key_id: str) -> int:
    url = next(line for line in server.output if line.startswith(WEB_PREFIX))[len(WEB_PREFIX):].strip()
    request = urllib.request.Request(f"{url}api/call/TaskService/ListTasks", data=b"{}", method="POST",
                                     headers={"x-taskmem-web": "1", "authorization": f"Bearer {secret(key_id)}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            json.loads(response.read())
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


async def grpc_code(address: str, key_id: str) -> grpc.StatusCode:
    async with grpc.aio.insecure_channel(address) as channel:
        try:
            await TaskServiceStub(channel).ListTasks(pb.ListTasksRequest(), metadata=bearer(key_id))
        except grpc.aio.AioRpcError as error:
            return error.code()
    return grpc.StatusCode.OK


async def becomes(check: Callable[[], Awaitable[object]], wanted: object) -> None:
    async def seen() -> bool:
        return await check() == wanted
    await eventually(seen, f"the answer becoming {wanted!r}")


async def test_a_key_added_to_the_file_is_accepted_without_a_restart(keyed: tuple[ServerProcess, Path]) -> None:
    server, keys = keyed
    assert await grpc_code(server.address, "newcomer") == grpc.StatusCode.UNAUTHENTICATED
    write_keys(keys, {**TEAM_KEYS, "newcomer": {"role": "reader", "namespaces": ["alpha"]}})
    await becomes(lambda: grpc_code(server.address, "newcomer"), grpc.StatusCode.OK)
    assert web_status(server, "newcomer") == 200


async def test_a_removed_key_is_refused_by_grpc_and_the_web_view_and_its_open_stream_ends(
        keyed: tuple[ServerProcess, Path]) -> None:
    server, keys = keyed
    async with grpc.aio.insecure_channel(server.address) as channel:
        tasks = TaskServiceStub(channel)
        task = (await tasks.CreateTask(pb.CreateTaskRequest(name="followed"), metadata=bearer("agent"))).task
        stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[task.id], after_cursor=0),
                                       metadata=bearer("dash"))
        first = await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)  # the stream is open and replaying
        assert first.event.task_id == task.id
        assert web_status(server, "dash") == 200

        write_keys(keys, {key_id: entry for key_id, entry in TEAM_KEYS.items() if key_id != "dash"})

        with pytest.raises(grpc.aio.AioRpcError) as raised:
            while True:  # the stream ends (no new event is needed to end it)
                await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
        assert_rpc_error(raised.value, grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_KEY_REVOKED")
        assert await grpc_code(server.address, "dash") == grpc.StatusCode.UNAUTHENTICATED
        assert web_status(server, "dash") == 401
        assert await grpc_code(server.address, "agent") == grpc.StatusCode.OK  # the others stay


async def test_a_key_whose_role_changes_has_its_stream_ended_and_gets_the_new_role(
        keyed: tuple[ServerProcess, Path]) -> None:
    server, keys = keyed
    async with grpc.aio.insecure_channel(server.address) as channel:
        tasks = TaskServiceStub(channel)
        task = (await tasks.CreateTask(pb.CreateTaskRequest(name="demoted"), metadata=bearer("agent"))).task
        stream = tasks.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[task.id], after_cursor=0),
                                       metadata=bearer("agent"))
        await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
        write_keys(keys, {**TEAM_KEYS, "agent": {"role": "reader", "namespaces": ["alpha"]}})
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            while True:
                await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)
        assert_rpc_error(raised.value, grpc.StatusCode.UNAUTHENTICATED, "ERROR_REASON_KEY_REVOKED")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await tasks.CreateTask(pb.CreateTaskRequest(name="no longer"), metadata=bearer("agent"))
        assert_rpc_error(refused.value, grpc.StatusCode.PERMISSION_DENIED, "ERROR_REASON_ROLE_DENIED")


async def test_a_broken_keys_file_leaves_the_keys_as_they_were(keyed: tuple[ServerProcess, Path]) -> None:
    server, keys = keyed
    keys.write_text("keys: [ {id: half-written")
    write_keys(keys.with_name("marker.yaml"), {})  # give the server time to look at the broken file
    deadline = time.monotonic() + HANG_GUARD_SECONDS
    while not any("keys_file" in line and "stay as they were" in line for line in server.output):
        assert time.monotonic() < deadline, "the broken file was never reported"
        await asyncio.sleep(0.05)
    assert await grpc_code(server.address, "dash") == grpc.StatusCode.OK
    write_keys(keys, {"solo": {"role": "reader", "namespaces": ["alpha"]}})
    await becomes(lambda: grpc_code(server.address, "dash"), grpc.StatusCode.UNAUTHENTICATED)
    assert await grpc_code(server.address, "solo") == grpc.StatusCode.OK


def test_a_keys_file_with_a_bad_entry_stops_the_server_at_start_naming_the_field(tmp_path: Path) -> None:
    (tmp_path / "keys.yaml").write_text("keys:\n  - {id: x, secret: long-enough-secret, role: owner}\n")
    server = ServerProcess(tmp_path / "t.db", "--keys-file", str(tmp_path / "keys.yaml"))
    with pytest.raises(RuntimeError, match=r"keys_file.keys\[0\].role"):
        server.start()


async def test_an_embedded_mcp_endpoint_refuses_a_removed_key(tmp_path: Path) -> None:
    import httpx2

    from tests.support.mcp_process import McpHttpProcess

    keys = tmp_path / "keys.yaml"
    write_keys(keys, TEAM_KEYS)
    (tmp_path / "taskmem.yaml").write_text(f"keys_file: {keys}\nembedding_backend: none\n")
    mcp = McpHttpProcess("--database", str(tmp_path / "memory.db"), "--config", str(tmp_path / "taskmem.yaml"))
    url = mcp.start()
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"authorization": f"Bearer {secret('dash')}", "accept": "application/json, text/event-stream"}
    try:
        async with httpx2.AsyncClient() as http:
            async def status() -> int:
                return (await http.post(url, json=listing, headers=headers)).status_code

            assert await status() != 401
            write_keys(keys, {key_id: entry for key_id, entry in TEAM_KEYS.items() if key_id != "dash"})
            await becomes(status, 401)
    finally:
        mcp.stop()


async def test_the_web_views_live_stream_of_a_removed_key_ends_with_an_error_event(
        keyed: tuple[ServerProcess, Path]) -> None:
    import httpx

    server, keys = keyed
    url = next(line for line in server.output if line.startswith(WEB_PREFIX))[len(WEB_PREFIX):].strip()
    headers = {"x-taskmem-web": "1", "authorization": f"Bearer {secret('dash')}"}
    async with httpx.AsyncClient(timeout=HANG_GUARD_SECONDS) as http:
        async with http.stream("GET", f"{url}api/events", headers=headers) as response:
            assert response.status_code == 200
            lines = response.aiter_lines()
            while await asyncio.wait_for(anext(lines), HANG_GUARD_SECONDS) != "event: ready":
                pass  # the stream is open once it has said where it starts
            write_keys(keys, {key_id: entry for key_id, entry in TEAM_KEYS.items() if key_id != "dash"})
            seen: list[str] = []

            async def until_the_end() -> None:
                async for line in lines:
                    seen.append(line)

            await asyncio.wait_for(until_the_end(), HANG_GUARD_SECONDS)
    assert "event: error" in seen and any("UNAUTHENTICATED" in line for line in seen), seen
