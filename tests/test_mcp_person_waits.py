"""MCP and waits on a person (issue 28, point 2): an agent asks a person with wait_create kind input or auth, and
task_query, task_list and the state resource say who must answer what until the answer is in the history."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters

from tests.test_mcp import failed, ok, section, task_id_of


def stdio_client(database: Path) -> Client:
    """`taskmem mcp` over stdio with this process's environment (the SDK passes only a few variables by
    default, which would leave out PYTHONPATH and run another checkout's taskmem)."""
    return Client(StdioServerParameters(command=sys.executable, env=dict(os.environ),
                                        args=["-m", "taskmem", "mcp", "--database", str(database)]))


async def test_an_agent_asks_a_person_and_task_query_says_who_must_answer_what(tmp_path: Path) -> None:
    async with stdio_client(tmp_path / "memory.db") as client:
        task_id = task_id_of(await ok(client, "task_register", name="Release", plan=["Build", "Ship"]))
        await ok(client, "task_update", task_id=task_id, task_status="executing")
        created = await ok(client, "wait_create", kind="input", task_id=task_id, question="Ship on Friday?",
                           asked_of="release manager")
        wait_id = re.search(r"wai_\w+", created).group(0)  # type: ignore[union-attr]
        signing = await ok(client, "wait_create", kind="auth", task_id=task_id, question="Unlock the signing key",
                           asked_of="security", plan_item_id="1")
        auth_id = re.search(r"wai_\w+", signing).group(0)  # type: ignore[union-attr]

        answer = await ok(client, "task_query", task_id=task_id)
        assert f"Task {task_id}: Release — input_required" in answer
        asked = section(answer, re.escape("Waiting on a person (their answer comes as a USER message in the history)"))
        assert f"{wait_id} release manager must answer: Ship on Friday?" in asked
        assert f"{auth_id} security must authorise: Unlock the signing key (for item 1," in asked
        assert "Open waits" not in answer
        assert task_id in await ok(client, "task_list", awaiting_person=True)
        assert task_id in await ok(client, "task_list", statuses=["input_required"])
        state = (await client.read_resource(f"taskmem://tasks/{task_id}/state")).contents[0].text  # type: ignore[union-attr]
        assert "status: input_required" in state and 'question: "Ship on Friday?"' in state

        await ok(client, "wait_resolve", wait_id=wait_id, result="yes, Friday 10:00")
        await ok(client, "wait_resolve", wait_id=auth_id, result="unlocked")
        answer = await ok(client, "task_query", task_id=task_id)
        assert "— executing" in answer and "Waiting on a person" not in answer
        assert "[Input received] yes, Friday 10:00" in section(answer, "Recent messages")
        assert "No tasks." == await ok(client, "task_list", awaiting_person=True)
        assert "question" in await failed(client, "wait_create", kind="input", task_id=task_id)
