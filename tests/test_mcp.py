"""`taskmem mcp` driven by the MCP SDK's own client: over stdio with an embedded server, and over
streamable HTTP against a running taskmem server (and an embedded one with API keys)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from taskmem.v1 import task_service_pb2, task_service_pb2_grpc
from tests.support.mcp_process import McpHttpProcess
from tests.support.certificates import needs_openssl, self_signed_localhost
from tests.support.server_process import ServerProcess

EXPECTED_TOOLS = {"task_register", "task_update", "task_query", "task_list", "task_note", "task_error",
                  "wait_create", "wait_check", "wait_resolve", "memory_add", "memory_search", "knowledge_upsert",
                  "knowledge_query", "context_build", "task_claim", "task_fork"}
PLAN = ["Build the image", "Push the image", "Pull the image on the server", "Run the container"]


def stdio_client(database: Path) -> Client:
    return Client(StdioServerParameters(command=sys.executable,
                                        args=["-m", "taskmem", "mcp", "--database", str(database)]))


async def ok(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    return text


async def failed(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, text
    assert "Traceback" not in text
    return text


def task_id_of(registered: str) -> str:
    found = re.search(r"tsk_\w+", registered)
    assert found, registered
    return found.group(0)


def section(answer: str, heading: str) -> str:
    """The text after 'heading:' up to the next line that starts a section (or the end)."""
    found = re.search(rf"^{heading}:(.*?)(?=^\S[^:\n]*:|\Z)", answer, re.S | re.M)
    return found.group(1) if found else ""


async def where_was_i_across_a_gap(connect: Callable[[], Client]) -> None:
    """Register, post progress, decide; then, in a new session (a compaction-like gap), post more,
    replace a decision and ask where it was."""
    async with connect() as client:
        assert EXPECTED_TOOLS <= {tool.name for tool in (await client.list_tools()).tools}
        task_id = task_id_of(await ok(client, "task_register", name="Deploy coursefolio", plan=PLAN))
        await ok(client, "task_update", task_id=task_id, task_status="executing", plan_item="1",
                 item_status="completed", message="Step 1 done — image built as v1.2.3")
        first = await ok(client, "task_note", task_id=task_id, kind="decision", text="Deploy with docker compose")
        old_uid = re.search(r"\[(d_\w+)\]", first).group(1)  # type: ignore[union-attr]
        await ok(client, "task_note", task_id=task_id, kind="constraint", text="Keep the old container until healthy")
        await ok(client, "task_note", task_id=task_id, kind="question", text="Which port does the health check use?")
    async with connect() as client:
        await ok(client, "task_update", task_id=task_id, plan_item="2", item_status="completed",
                 message="Step 2 done — pushed to ghcr.io")
        replaced = await ok(client, "task_note", task_id=task_id, kind="decision", replaces=old_uid,
                            text="Deploy with a systemd unit instead of docker compose")
        assert f"{old_uid} is retired" in replaced
        await ok(client, "task_update", task_id=task_id, plan_item="3", item_status="in_progress",
                 message="Pulling the image on the server")
        answer = await ok(client, "task_query", task_id=task_id)
        state = await client.read_resource(f"taskmem://tasks/{task_id}/state")
        plan = await client.read_resource(f"taskmem://tasks/{task_id}/plan")
    assert "2/4 done" in answer
    completed = section(answer, "Completed")
    assert "Build the image" in completed and "Push the image" in completed
    assert "Pull the image" in section(answer, "Current")
    assert "Run the container" in section(answer, "Next") and "Run the container" not in completed
    decisions = section(answer, "Decisions")
    assert "systemd unit" in decisions and old_uid not in answer
    assert "Keep the old container until healthy" in section(answer, "Constraints")
    assert "Which port does the health check use?" in section(answer, "Open questions")
    assert f"id: {task_id}" in state.contents[0].text  # type: ignore[union-attr]
    assert "docker compose" not in state.contents[0].text.replace("instead of docker compose", "")  # type: ignore[union-attr]
    assert "3. [in_progress] Pull the image on the server" in plan.contents[0].text  # type: ignore[union-attr]


async def bad_arguments_name_the_field(client: Client) -> None:
    task_id = task_id_of(await ok(client, "task_register", name="Errors", plan=["one"]))
    assert "item_status" in await failed(client, "task_update", task_id=task_id, plan_item="1", item_status="done")
    assert "plan_item" in await failed(client, "task_update", task_id=task_id, item_status="completed")
    assert "plan[1].depends_on" in await failed(client, "task_register", name="Cycle", plan=[
        {"id": "a", "title": "A"}, {"id": "b", "title": "B", "depends_on": ["missing"]}])
    assert "seconds" in await failed(client, "wait_create", kind="timer", task_id=task_id)
    assert "token_budget" in await failed(client, "context_build", task_id=task_id, token_budget=0)
    assert "NOT_FOUND" in await failed(client, "task_query", task_id="tsk_00000000000000000000000a")
    assert "name" in await failed(client, "task_register", plan=["no name"])


async def linked_wait_resolves_into_the_task_history(client: Client) -> str:
    task_id = task_id_of(await ok(client, "task_register", name="Release", plan=["Wait for approval", "Ship"]))
    created = await ok(client, "wait_create", kind="external", task_id=task_id, criteria="release approved",
                       timeout_seconds=3600)
    wait_id = re.search(r"wai_\w+", created).group(0)  # type: ignore[union-attr]
    assert "[waiting]" in await ok(client, "wait_check", wait_id=wait_id)
    # Parked on the wait: "where was I?" and the state resource both say what it waits for.
    waits = section(await ok(client, "task_query", task_id=task_id), "Open waits")
    assert wait_id in waits and "(external) release approved" in waits and "times out after 1h" in waits
    state = (await client.read_resource(f"taskmem://tasks/{task_id}/state")).contents[0].text  # type: ignore[union-attr]
    assert "open_waits:" in state and f"id: {wait_id}" in state and 'criteria: "release approved"' in state
    await ok(client, "wait_resolve", wait_id=wait_id, result="approved by alex")
    checked = await ok(client, "wait_check", wait_id=wait_id)
    assert "[resolved]" in checked and "approved by alex" in checked
    answer = await ok(client, "task_query", task_id=task_id)
    assert "Open waits" not in answer
    recent = section(answer, "Recent messages")
    assert "release approved" in recent and "approved by alex" in recent
    assert "open_waits" not in (await client.read_resource(
        f"taskmem://tasks/{task_id}/state")).contents[0].text  # type: ignore[union-attr]
    return task_id


async def test_stdio_agent_finds_where_it_was_after_a_restart(tmp_path: Path) -> None:
    # Each session is a new `taskmem mcp` process on the same database: the host restarted.
    await where_was_i_across_a_gap(lambda: stdio_client(tmp_path / "memory.db"))


async def test_stdio_linked_wait_and_bad_arguments(tmp_path: Path) -> None:
    async with stdio_client(tmp_path / "memory.db") as client:
        await linked_wait_resolves_into_the_task_history(client)
        await bad_arguments_name_the_field(client)


@pytest.fixture(scope="module")
def mcp_over_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A taskmem server and `taskmem mcp --http --address` in front of it: (MCP URL, gRPC address)."""
    server = ServerProcess(tmp_path_factory.mktemp("mcp-http") / "taskmem.db")
    address = server.start()
    mcp = McpHttpProcess("--address", address)
    try:
        yield mcp.start(), address
    finally:
        mcp.stop()
        server.stop()


async def test_http_agent_finds_where_it_was_in_a_new_session(mcp_over_http: tuple[str, str]) -> None:
    # Clients are opened inside the test: anyio's cancel scopes must exit in the task they entered.
    await where_was_i_across_a_gap(lambda: Client(mcp_over_http[0]))


async def test_http_linked_wait_and_bad_arguments(mcp_over_http: tuple[str, str]) -> None:
    async with Client(mcp_over_http[0]) as client:
        task_id = await linked_wait_resolves_into_the_task_history(client)
        await bad_arguments_name_the_field(client)
        assert task_id in await ok(client, "task_list")
    async with grpc.aio.insecure_channel(mcp_over_http[1]) as channel:
        messages = await task_service_pb2_grpc.TaskServiceStub(channel).ListMessages(
            task_service_pb2.ListMessagesRequest(task_id=task_id))
    assert any(m.content.startswith("[Wait resolved] release approved") for m in messages.messages)


async def test_http_an_open_question_is_listed_until_answer_question_settles_it(
        mcp_over_http: tuple[str, str]) -> None:
    held, rival = "Use Redis for caching", "Do not use Redis for caching"
    async with Client(mcp_over_http[0]) as client:
        task_id = task_id_of(await ok(client, "task_register", name="Cache layer", plan=["Build the cache"]))
        await ok(client, "task_note", task_id=task_id, kind="decision", text="Deploy on Fridays only")
        held_uid = re.search(r"\[(d_\w+)\]", await ok(client, "task_note", task_id=task_id, kind="decision",
                                                      text=held)).group(1)  # type: ignore[union-attr]
        recorded = await ok(client, "task_note", task_id=task_id, kind="decision", text=rival)
        rival_uid = re.search(r"\[(d_\w+)\]", recorded).group(1)  # type: ignore[union-attr]
        # The write asks the question and names the call that answers it, with both uids.
        assert f"does it replace [{held_uid}], stand beside it, or say the same?" in recorded
        assert f"answer_question(new_uid={rival_uid}, old_uid={held_uid}" in recorded
        question = f"does [{rival_uid}] {rival} replace [{held_uid}] {held}, stand beside it, or say the same?"
        answer = await ok(client, "task_query", task_id=task_id)
        assert question in section(answer, "Undecided —[^:]*")
        assert answer.count(rival) == 1 and section(answer, "Decisions").strip().endswith("Deploy on Fridays only")
        listed = await ok(client, "task_questions", task_id=task_id)
        assert question in listed and f"new_uid={rival_uid} old_uid={held_uid}" in listed
        # One call answers it; the reply lists the questions left (none).
        answered = await ok(client, "answer_question", task_id=task_id, new_uid=rival_uid, old_uid=held_uid,
                            answer="replaces")
        assert f"Retired: {held_uid}" in answered and "No open questions." in answered
        answer = await ok(client, "task_query", task_id=task_id)
    assert "stand beside it" not in answer and held not in answer
    assert f"[{rival_uid}] {rival}" in section(answer, "Decisions")


async def test_http_a_may_be_finished_question_is_asked_until_task_update_answers_it(
        mcp_over_http: tuple[str, str]) -> None:
    async with Client(mcp_over_http[0]) as client:
        task_id = task_id_of(await ok(client, "task_register", name="Pressing", plan=[
            {"id": "lacquers", "title": "Get the lacquers cut"}, {"id": "sleeve", "title": "Send the sleeve artwork"}]))
        recorded = await ok(client, "task_update", task_id=task_id, message="lacquers are cut! side B runs hot")
        assert "May be finished" in recorded and "step 1 'Get the lacquers cut'" in recorded
        answer = await ok(client, "task_query", task_id=task_id)
        assert "step 1 'Get the lacquers cut'" in section(answer, "May be finished[^:]*") and "0/2 done" in answer
        await ok(client, "task_update", task_id=task_id, plan_item="lacquers", dismiss_question=True)
        answer = await ok(client, "task_query", task_id=task_id)
    assert "May be finished" not in answer and "0/2 done" in answer


async def test_http_two_agents_claim_different_steps_and_a_former_holder_is_refused(
        mcp_over_http: tuple[str, str]) -> None:
    async with Client(mcp_over_http[0]) as client:
        task_id = task_id_of(await ok(client, "task_register", name="Shared plan", plan=["Lint", "Test", "Ship"]))
        first = await ok(client, "task_claim", task_id=task_id, holder="agent-1")
        second = await ok(client, "task_claim", task_id=task_id, holder="agent-2")
        assert first.startswith("Claimed 1 — Lint for agent-1") and second.startswith("Claimed 2 — Test for agent-2")
        assert "holder='agent-1'" in first
        assert "Renewed: you (agent-1) hold 1" in await ok(client, "task_claim", task_id=task_id, holder="agent-1",
                                                           plan_item="1")
        assert "Held: 1 by agent-1" in await ok(client, "task_query", task_id=task_id)
        refused = await failed(client, "task_update", task_id=task_id, plan_item="2", item_status="completed",
                               holder="agent-1")
        assert "FAILED_PRECONDITION" in refused and "'agent-2'" in refused
        await ok(client, "task_update", task_id=task_id, plan_item="1", item_status="completed", holder="agent-1")
        assert "Claimed 3 — Ship" in await ok(client, "task_claim", task_id=task_id, holder="agent-1")
        assert "Nothing ready now: 2" in await ok(client, "task_claim", task_id=task_id, holder="agent-3")


async def test_http_task_fork_starts_an_alternative_from_the_task_as_it_stands(
        mcp_over_http: tuple[str, str]) -> None:
    async with Client(mcp_over_http[0]) as client:
        task_id = task_id_of(await ok(client, "task_register", name="Pick a cache", plan=["Compare", "Wire"]))
        await ok(client, "task_update", task_id=task_id, plan_item="1", item_status="completed")
        answer = await ok(client, "task_fork", task_id=task_id, name="Try Valkey")
        fork_id = answer.split(" into ")[1].split(" ")[0]
        assert answer.startswith(f"Forked {task_id} at cursor ") and "Try Valkey" in answer
        assert "1. [completed] Compare" in answer and "2. [pending] Wire" in answer
        assert fork_id != task_id and "Completed: 1" in await ok(client, "task_query", task_id=fork_id)


async def test_http_memory_knowledge_and_context_round_trip(mcp_over_http: tuple[str, str]) -> None:
    async with Client(mcp_over_http[0]) as http_client:
        await _memory_knowledge_and_context(http_client)


async def _memory_knowledge_and_context(http_client: Client) -> None:
    task_id = task_id_of(await ok(http_client, "task_register", name="Migrate", plan=["Export", "Import"]))
    await ok(http_client, "memory_add", task_id=task_id, type="discovery",
             summary="The legacy database has three undocumented tables")
    await ok(http_client, "task_error", task_id=task_id, plan_item="1", error="pg_dump failed: permission denied",
             resolution="ran it as the postgres user")
    assert "undocumented tables" in await ok(http_client, "memory_search", query="undocumented tables",
                                             task_id=task_id, mode="fulltext")
    await ok(http_client, "knowledge_upsert", category="convention", key="db.engine", value="postgres 16")
    assert "db.engine = postgres 16" in await ok(http_client, "knowledge_query", key_prefix="db.")
    context = await ok(http_client, "context_build", task_id=task_id, token_budget=400)
    assert "pg_dump failed" in context


async def test_http_with_api_keys_refuses_a_caller_without_the_bearer(tmp_path: Path) -> None:
    config = tmp_path / "taskmem.yaml"
    config.write_text("api_keys: ['mcp-secret']\n")
    mcp = McpHttpProcess("--database", str(tmp_path / "memory.db"), "--config", str(config))
    url = mcp.start()
    try:
        async with httpx2.AsyncClient() as plain:
            refused = await plain.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert refused.status_code == 401
        async with httpx2.AsyncClient(headers={"authorization": "Bearer mcp-secret"}) as authorised:
            async with Client(streamable_http_client(url, http_client=authorised)) as client:
                assert "Keyed" in await ok(client, "task_register", name="Keyed")
    finally:
        mcp.stop()


def test_http_on_a_public_address_without_keys_is_refused(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "taskmem", "mcp", "--http", "0.0.0.0:0", "--database",
                             str(tmp_path / "m.db")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "--insecure" in result.stderr


def test_http_on_a_public_address_with_keys_is_refused_as_keys_would_cross_in_clear_text(tmp_path: Path) -> None:
    import subprocess

    config = tmp_path / "taskmem.yaml"
    config.write_text("api_keys: ['mcp-secret']\n")
    result = subprocess.run([sys.executable, "-m", "taskmem", "mcp", "--http", "0.0.0.0:0", "--database",
                             str(tmp_path / "m.db"), "--config", str(config)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2 and "clear text" in result.stderr and "--insecure" in result.stderr


async def test_the_readme_host_configuration_works_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    readme = (Path(__file__).resolve().parents[1] / "docs" / "front-doors.md").read_text()
    block = re.search(r"## MCP.*?```json\n(.*?)```", readme, re.S)
    assert block, "docs/front-doors.md's MCP section has a JSON block"
    entry = json.loads(block.group(1))["mcpServers"]["taskmem"]
    # `taskmem` on the PATH, as an installed one would be; HOME keeps the default database in the test's folder.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(tmp_path))
    async with Client(StdioServerParameters(command=entry["command"], args=entry["args"],
                                            env={"HOME": str(tmp_path)})) as client:
        task_id = task_id_of(await ok(client, "task_register", name="From the README", plan=["one"]))
        assert "From the README" in await ok(client, "task_query", task_id=task_id)
    assert (tmp_path / ".local" / "share" / "taskmem" / "taskmem.db").exists()


@needs_openssl
async def test_stdio_against_a_tls_server_acts_with_its_key_in_the_namespace_it_names(tmp_path: Path) -> None:
    cert, key = self_signed_localhost(tmp_path)
    server = ServerProcess(tmp_path / "t.db", "--api-key", "both-key:beta,alpha", "--tls-cert-file", str(cert),
                           "--tls-key-file", str(key))
    address = server.start()

    def remote(token: str) -> Client:
        return Client(StdioServerParameters(command=sys.executable, args=[
            "-m", "taskmem", "mcp", "--address", address, "--token", token, "--namespace", "alpha",
            "--tls-ca-file", str(cert)]))
    try:
        async with remote("both-key") as client:
            task_id = task_id_of(await ok(client, "task_register", name="Over TLS", plan=["one"]))
            assert "Over TLS" in await ok(client, "task_query", task_id=task_id)
        credentials = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())
        async with grpc.aio.secure_channel(address, credentials) as channel:
            found = await task_service_pb2_grpc.TaskServiceStub(channel).GetTask(
                task_service_pb2.GetTaskRequest(task_id=task_id),
                metadata=[("authorization", "Bearer both-key"), ("x-taskmem-namespace", "alpha")])
        assert found.task.namespace == "alpha"  # not the key's first namespace (beta): the one it named
        async with remote("wrong-key") as client:
            refused = await failed(client, "task_list")
            assert "UNAUTHENTICATED" in refused
    finally:
        server.stop()
