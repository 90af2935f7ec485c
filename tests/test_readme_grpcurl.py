"""The README's grpcurl walkthrough runs as written against a real server (reflection only, no protos)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.server_process import ServerProcess

ROOT = Path(__file__).resolve().parents[1]
GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"
MARKER = "<!-- grpcurl-walkthrough"
README_ADDRESS = "127.0.0.1:50051"


def walkthrough() -> str:
    text = (ROOT / "README.md").read_text()
    after_marker = text[text.index(MARKER):]
    return re.search(r"```sh\n(.*?)```", after_marker, re.S).group(1)  # type: ignore[union-attr]


def run(script: str, address: str) -> str:
    # grpcurl is the pinned binary; a streaming call gets a deadline so the script ends.
    prelude = (f'grpcurl() {{ case "$*" in *SubscribeEvents*) "{GRPCURL}" -max-time 3 "$@" || true;; '
               f'*) "{GRPCURL}" "$@";; esac; }}\nset -e\n')
    result = subprocess.run(["bash", "-c", prelude + script.replace(README_ADDRESS, address)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_readme_walkthrough_runs_against_reflection(server: ServerProcess) -> None:
    assert GRPCURL.exists(), "make test installs grpcurl into .tools/bin"
    script = walkthrough()
    before, _, after = script.partition("\nTASK=")
    created = run(before, server.address)
    assert "taskmem.v1.TaskService" in created and "grpc.health.v1.Health" in created
    task_id = re.search(r'"id": "(tsk_[0-9a-f]+)"', created).group(1)  # type: ignore[union-attr]
    rest = after.split("\n", 1)[1]
    output = run(f"TASK={task_id}\n{rest}", server.address)
    assert '"summary": "Completed 1/3: build.' in output
    assert "Next: push — Push to the registry." in output
    for event_type in ("EVENT_TYPE_TASK_CREATED", "EVENT_TYPE_PLAN_REPLACED", "EVENT_TYPE_ACTION_RECORDED",
                       "EVENT_TYPE_PLAN_ITEM_UPDATED"):
        assert event_type in output
