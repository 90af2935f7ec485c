"""What `make test` and `make test-fast` run, read from `make -n` (which prints each pass's command
without running it): the whole suite with the SQLite pass spread over workers, and the unit tests alone."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def planned_pytest_runs(target: str) -> list[list[str]]:
    """The arguments of each pytest `make <target>` would run (-n runs only the recursive makes)."""
    # Not the flags of a `make test` this runs under (its jobserver, its output sync).
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    printed = subprocess.run(["make", "-n", target], cwd=ROOT, env=environment, capture_output=True, text=True,
                             timeout=120, check=True).stdout
    runs = [shlex.split(line) for line in printed.splitlines() if " -m pytest " in line]
    return [words[words.index("pytest") + 1:] for words in runs]


def test_make_test_fast_runs_the_unit_tests_alone_in_one_process() -> None:
    assert planned_pytest_runs("test-fast") == [["-q", "tests/unit"]]


def test_make_test_spreads_the_sqlite_pass_over_workers_and_runs_the_postgres_pass_too() -> None:
    sqlite, postgres = planned_pytest_runs("test")
    assert "--numprocesses" in sqlite and "--engine" not in sqlite and not any(a.startswith("tests/") for a in sqlite)
    assert postgres[postgres.index("--engine") + 1] == "postgres" and "no:hypothesispytest" in postgres


def test_make_run_serves_on_the_address_given() -> None:
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    printed = subprocess.run(["make", "-n", "run", "ADDRESS=127.0.0.1:6000"], cwd=ROOT, env=environment,
                             capture_output=True, text=True, timeout=120, check=True).stdout
    (serve,) = [shlex.split(line) for line in printed.splitlines() if " serve " in line]
    assert serve[serve.index("--listen") + 1] == "127.0.0.1:6000"
