"""`make bench`: run every benchmark script, show its whole output as it runs, and end with one table.

Each script prints its own figures; this keeps each one's output in data/bench/<script>.log and, at
the end, prints one row per benchmark: its goal, the headline lines of its output
(picked by the line starts below, so the table shows the figures exactly as the script printed them),
the load average over its run and how it ended. A script that fails does not stop the others; the
run then exits 1.

    .venv/bin/python tools/run_benchmarks.py [SCRIPT ...]     (default: all of BENCHMARKS, in order)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Benchmark:
    script: str
    goal: str
    headline: str  # a regular expression matching the start of the lines that carry the figures


BENCHMARKS = [
    Benchmark("task_service_bench", "RecordAction ≥ 0.75×, GetTask ≥ 0.9× echo", r"(echo|RecordAction|GetTask) "),
    Benchmark("ghz_bench", "RecordAction ≥ 0.75×, GetTask ≥ 0.9× echo; p99 ≤ 10 ms at 50 % of the max rate",
              r"(echo|RecordAction|GetTask) "),
    Benchmark("events_bench", "all delivered, append→receipt p99 ≤ 50 ms at 1,000/s for 60 s",
              r"(writer:|writes:|python |go |typescript )"),
    Benchmark("write_batch_bench", "—", r"(batch |\s*(1|8|64) )"),
    Benchmark("fsync_bench", "—", r"(4 KiB|SQLite WAL)"),
    Benchmark("wait_bench", "idle CPU ≈ 0, p99 ≤ 50 ms", r"(\d+ open timers|\d+ timers due)"),
    Benchmark("state_bench", "p95 ≤ 5 ms server-side", r"(server-side|gRPC) "),
    Benchmark("memory_bench", "HYBRID p95 ≤ 15 ms server-side at 100k", r"\s*server-side\s+100000 .*HYBRID"),
    Benchmark("calibrate_reconciliation", "swallowed 0; ≥ 88 % overall", r"reconcile_candidates, "),
    Benchmark("score_plan_inference", "0 silently wrong", r"(\S+\.yaml$|\s*finished steps)"),
    Benchmark("plan_inference_bench", "—", r"(opted out|inference on)"),
    Benchmark("where_was_i_bench", "100 % within budget", r"\w+: \d+ completed, current"),
    Benchmark("webhook_bench", "keeps up at 200/s; metrics ≤ 5 %", r"\s*(delivered|commit -> receipt|without metrics)"),
    Benchmark("web_bench", "—", r"\s+\S.* (median|\d+ seen) "),
    Benchmark("client_call_wrapping_bench", "wrapping adds < 25 µs CPU a call", r"wrapped "),
    Benchmark("trust_probe", "0 failures; a removed key refused at every door within 1 s",
              r"\s*(grpc|web|mcp|a2a|oracle|audit|stream ended|every door|failures)"),
    Benchmark("checkpoint_bench", "≤ 1.5× PostgreSQL saver; 1,000 steps ≤ 2× SQLite saver",
              r"\s*(taskmem \(|langgraph-|taskmem / |installed size)"),
]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def run(benchmark: Benchmark, bench: Path, logs: Path) -> tuple[list[str], str, str]:
    """Runs one script with its output shown and logged; its headline lines, the load average over the run
    (before → after) and how it ended."""
    script = bench / f"{benchmark.script}.py"
    print(f"== bench/{benchmark.script}.py", flush=True)
    load_before, started = load(), time.monotonic()
    lines: list[str] = []
    with subprocess.Popen([sys.executable, str(script)], cwd=ROOT, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            lines.append(line.rstrip("\n"))
    (logs / f"{benchmark.script}.log").write_text("\n".join(lines) + "\n")
    outcome = "ok" if process.returncode == 0 else f"FAILED (exit {process.returncode})"
    headline = [line.strip() for line in lines if re.match(benchmark.headline, line)]
    return headline, f"{load_before} → {load()}", f"{outcome}, {time.monotonic() - started:.0f} s"


def main(names: list[str], bench: Path = ROOT / "bench", logs: Path = ROOT / "data" / "bench") -> int:
    unknown = set(names) - {b.script for b in BENCHMARKS}
    if unknown:
        print(f"not benchmarks of make bench: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    logs.mkdir(parents=True, exist_ok=True)
    chosen = [b for b in BENCHMARKS if not names or b.script in names]
    results = [(benchmark, *run(benchmark, bench, logs)) for benchmark in chosen]
    print(f"\n== summary ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores; "
          f"each benchmark's figures as it printed them, whole outputs in {logs}/)")
    print(f"{'benchmark':<26} {'goal':<42} {'load':<12} result")
    for benchmark, headline, load_span, outcome in results:
        print(f"{benchmark.script:<26} {benchmark.goal:<42} {load_span:<12} {outcome}")
        for line in headline or ["(no figures found in its output: see the log)"]:
            print(f"    {line}")
    return 0 if all(outcome.startswith("ok") for *_, outcome in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
