"""The examples run against a live server as a user would run them: the LangGraph graph, and the Agents SDK agent
with a scripted OpenAI-compatible model on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.frameworks.scripted_chat_model import scripted_chat_model
from tests.support.server_process import ServerProcess

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(script: str, *arguments: str) -> str:
    ran = subprocess.run([sys.executable, str(EXAMPLES / script), *arguments], capture_output=True, text=True,
                         timeout=180)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout


def test_the_langgraph_example_checkpoints_resumes_and_copies_its_thread(server: ServerProcess) -> None:
    out = run("langgraph_graph.py", "--address", server.address)
    assert "graph: checkpoint step 3 (loop)" in out
    assert "graph: notes: drafted, reviewed: too long, revised, drafted, reviewed: too long, revised" in out
    assert "10 checkpoints, latest found" in out and out.rstrip().endswith("graph: done")


def test_the_agents_example_continues_its_conversation_from_the_task(server: ServerProcess) -> None:
    with scripted_chat_model() as (base_url, _):
        out = run("openai_agent.py", "--address", server.address, "--base-url", base_url, "--model", "scripted")
    assert "agent: turn 1: It is sunny in Paris." in out and "agent: turn 2: Your name is Ada." in out
    assert "holds 6 items" in out and out.rstrip().endswith("agent: done")
