"""bench/task_service_bench.py measures what users run: the default server through taskmem_client, beside echo
(issue 31)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_service_benchmark_drives_the_default_server_through_the_client_on_several_channels() -> None:
    run = subprocess.run([sys.executable, "bench/task_service_bench.py", "--seconds", "0.3", "--rounds", "1",
                          "--channels", "2", "--in-flight", "4"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("2 channels x 4 calls in flight, 1 rounds")
    for label in ("echo (RecordAction's bytes)", "RecordAction [this tree]", "GetTask (50 items) [this tree]"):
        line = next(line for line in lines if line.startswith(label))
        assert "req/s" in line and "server CPU" in line and "client CPU" in line
    assert any("attempts refused and retried" in line for line in lines)
