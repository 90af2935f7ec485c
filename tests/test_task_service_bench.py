"""bench/task_service_bench.py measures what users run: the default server through taskmem_client, beside echo
(issue 31)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

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



def test_a_compared_checkout_is_called_through_its_own_client_while_this_trees_stays_imported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "clients" / "python" / "src" / "taskmem_client"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text('class TaskmemClient:\n    origin = "other"\n'
                                       'class RetryPolicy:\n    origin = "other"\n')
    spec = importlib.util.spec_from_file_location("task_service_bench", ROOT / "bench" / "task_service_bench.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "task_service_bench", bench)
    spec.loader.exec_module(bench)
    import taskmem_client

    client, policy = bench.client_of(tmp_path)
    assert client.origin == policy.origin == "other"
    assert sys.modules["taskmem_client"] is taskmem_client
    assert bench.client_of(ROOT) == (taskmem_client.TaskmemClient, taskmem_client.RetryPolicy)
