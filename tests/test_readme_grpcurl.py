"""The grpcurl walkthrough (docs/walkthrough.md) and the README's taste run as written against a real server
(reflection only, no protos)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
README_ADDRESS = "127.0.0.1:50051"


def block_after(document: str, marker: str) -> str:
    """The sh block that follows an HTML comment marking it as run by this test."""
    text = (ROOT / document).read_text()
    after_marker = text[text.index(marker):]
    return re.search(r"```sh\n(.*?)```", after_marker, re.S).group(1)  # type: ignore[union-attr]


def walkthrough() -> str:
    return block_after("docs/walkthrough.md", "<!-- grpcurl-walkthrough")


def run(script: str, address: str) -> str:
    # grpcurl is the pinned binary; a streaming call gets a deadline so the script ends.
    prelude = (f'grpcurl() {{ case "$*" in *SubscribeEvents*) "{GRPCURL}" -max-time 3 "$@" || true;; '
               f'*) "{GRPCURL}" "$@";; esac; }}\nset -e\n')
    result = subprocess.run(["bash", "-c", prelude + script.replace(README_ADDRESS, address)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


SERVICES = ("taskmem.v1.TaskService", "taskmem.v1.WaitService", "taskmem.v1.StateService",
            "taskmem.v1.MemoryService", "grpc.health.v1.Health")


def test_the_walkthrough_calls_every_service_and_streams_through_reflection(server: ServerProcess) -> None:
    assert GRPCURL.exists(), "make run and make test install grpcurl into .tools/bin"
    script = walkthrough()
    for service in SERVICES:
        assert f"{service}/" in script, f"the walkthrough shows no grpcurl call of {service}"
    assert "taskmem.v1.TaskService/SubscribeEvents" in script
    output = run(script, server.address)
    for service in SERVICES:
        assert service in output  # `grpcurl list` through reflection
    task_id = re.search(r"^created (tsk_[0-9a-f]+)$", output, re.M).group(1)  # type: ignore[union-attr]
    assert re.search(r"^waiting on wai_[0-9a-f]+$", output, re.M), "the wait's id was read from the answer"
    assert '"status": "TASK_STATUS_EXECUTING"' in output  # TaskService/UpdateTask with its update_mask
    assert '"summary": "Completed 1/3: build.' in output  # TaskService/GetProgress
    assert "Next: push — Push to the registry." in output
    assert '"status": "WAIT_STATUS_WAITING"' in output  # WaitService/CreateWait
    assert f"id: {task_id}" in output and '"tokenCount"' in output  # StateService/GetTaskState
    assert '"status": "TASK_STATUS_INPUT_REQUIRED"' in output  # ListTasks awaiting_person: a wait on a person
    assert "status: input_required" in output and "needs: input" in output  # GetTaskState
    assert '"status": "WAIT_STATUS_RESOLVED"' in output and "approved by alex" in output  # ResolveWait
    assert '"outcome": "UPSERT_KNOWLEDGE_OUTCOME_CREATED"' in output  # MemoryService/UpsertKnowledge
    assert '"status": "SERVING"' in output  # grpc.health.v1.Health/Check
    for event_type in ("EVENT_TYPE_TASK_CREATED", "EVENT_TYPE_TASK_STATUS_CHANGED", "EVENT_TYPE_PLAN_REPLACED",
                       "EVENT_TYPE_ACTION_RECORDED", "EVENT_TYPE_PLAN_ITEM_UPDATED", "EVENT_TYPE_WAIT_CREATED",
                       "EVENT_TYPE_WAIT_RESOLVED"):
        assert event_type in output  # TaskService/SubscribeEvents replayed the task's history


def test_the_readme_taste_creates_a_task_finishes_a_step_and_asks_where_was_i(server: ServerProcess) -> None:
    script = block_after("README.md", "<!-- grpcurl-taste")
    assert len(script.splitlines()) <= 10, "the README's taste stays ten lines"
    output = run(script, server.address)
    assert '"summary": "Completed 1/2: build.' in output  # TaskService/GetProgress
    assert "Next: push — Push to the registry." in output


def test_make_run_installs_the_commands_the_readme_puts_on_the_path() -> None:
    makefile = (ROOT / "Makefile").read_text()
    run_target = re.search(r"^run: (.*)$", makefile, re.M).group(1)  # type: ignore[union-attr]
    assert "$(VENV)/.installed" in run_target and "$(TOOLS)/.installed" in run_target
    for document in ("README.md", "docs/walkthrough.md"):
        assert 'export PATH="$PWD/.venv/bin:$PWD/.tools/bin:$PATH"' in (ROOT / document).read_text()
