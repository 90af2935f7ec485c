"""bench/ghz_bench.py drives the default server and a bare echo with ghz, the same load for each (issue 44)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_ghz_benchmark_reports_each_method_beside_echo_with_server_cpu_and_the_load() -> None:
    run = subprocess.run([sys.executable, "bench/ghz_bench.py", "--seconds", "1", "--rounds", "1", "--half-rounds", "1",
                          "--concurrency", "4", "--connections", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=180)

    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("ghz 4 in flight over 1 connections, binary payloads, 1 rounds of 1 s; load ")
    for label in ("echo (RecordAction's bytes)", "RecordAction", "GetTask (50 items)"):
        summary = next(line for line in lines if line.startswith(label))
        assert "req/s" in summary and "server CPU" in summary and "µs/call" in summary and "failed 0" in summary
        rounds = [line for line in lines if line.strip().startswith(f"round 1 {label}")]
        assert len(rounds) == 2 and all(" load " in line for line in rounds)  # full rate, then half of it
        assert any(line.startswith(f"{label:<28} at ") and "p99" in line for line in lines)
    assert "x echo" in next(line for line in lines if line.startswith("GetTask (50 items)"))
