"""`make bench` ends with one summary of every benchmark's figures, and the README gives each benchmark one
row (issue 31)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import run_benchmarks  # noqa: E402

FAKE_FSYNC = """
print("in /tmp/x; load average 1.00 1.00 1.00")
print("4 KiB append + fsync      p50 0.40 ms, p99 13.1 ms")
print("SQLite WAL COMMIT (FULL)  p50 0.41 ms, p99 13.8 ms")
"""
FAKE_WAITS_FAILING = """
import sys
print("10000 open timers: RSS   88.0 MiB   idle CPU  0.10 %")
sys.exit(3)
"""


def test_make_bench_ends_with_a_summary_of_each_benchmarks_printed_figures_and_its_outcome(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "fsync_bench.py").write_text(FAKE_FSYNC)
    (bench / "wait_bench.py").write_text(FAKE_WAITS_FAILING)

    code = run_benchmarks.main(["fsync_bench", "wait_bench"], bench=bench, logs=tmp_path / "logs")

    assert code == 1  # one benchmark failed: the run says so, after running the rest
    output = capsys.readouterr().out
    shown, summary = output.split("\n== summary", 1)
    assert "in /tmp/x; load average" in shown  # each script's whole output as it runs
    rows = summary.splitlines()
    fsync_row = next(i for i, row in enumerate(rows) if row.startswith("fsync_bench "))
    assert " ok, " in rows[fsync_row] and re.search(r"\d+\.\d → \d+\.\d", rows[fsync_row])
    assert [row.strip() for row in rows[fsync_row + 1:fsync_row + 3]] == [
        "4 KiB append + fsync      p50 0.40 ms, p99 13.1 ms", "SQLite WAL COMMIT (FULL)  p50 0.41 ms, p99 13.8 ms"]
    waits_row = next(i for i, row in enumerate(rows) if row.startswith("wait_bench "))
    assert "FAILED (exit 3)" in rows[waits_row] and "idle CPU ≈ 0, p99 ≤ 50 ms" in rows[waits_row]
    assert rows[waits_row + 1].strip() == "10000 open timers: RSS   88.0 MiB   idle CPU  0.10 %"
    assert "SQLite WAL COMMIT" in (tmp_path / "logs" / "fsync_bench.log").read_text()


def _first_table(markdown: str, heading: str) -> list[list[str]]:
    """The cells of the first table after heading, without its header rows."""
    lines = markdown.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    return [[cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]] for row in lines[start + 2:end]]


def test_the_readme_gives_each_benchmark_one_row_with_its_goal_and_latest_dated_figure() -> None:
    readme = _first_table((ROOT / "README.md").read_text(), "## Benchmarks")
    documented = _first_table((ROOT / "docs" / "benchmarks.md").read_text(), "# Benchmarks")
    commands = [re.search(r"bench/(\w+)\.py", row[0]).group(1) for row in documented]  # type: ignore[union-attr]
    names = [row[0] for row in readme]

    assert sorted(names) == sorted(commands) and len(set(names)) == len(names)
    assert {b.script for b in run_benchmarks.BENCHMARKS} <= set(names)
    for name, measures, goal, latest in readme:
        assert (ROOT / "bench" / f"{name}.py").exists() and measures and goal
        # The latest figure carries its date and load, or says where the figures are, or that none is kept.
        assert re.search(r"20\d\d-\d\d-\d\d", latest) or latest.startswith(("see ", "not recorded")), name
        assert len(re.findall(r"20\d\d-\d\d-\d\d", latest)) <= 1, f"{name}: its history belongs in docs/benchmarks.md"
