"""Start a real `taskmem serve` process on a free loopback port with its own database."""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.support.eventually import HANG_GUARD_SECONDS

READY_PREFIX = "taskmem: serving on "
# The engine every server started here runs on: "sqlite" (the database path as given) or "postgres"
# (a database of the test PostgreSQL named after that path); conftest.py sets it from --engine.
ENGINE = "sqlite"
# Servers under test refuse calls for being over capacity only by count (tests/test_overload.py sets its own
# limits): the event loop's lateness depends on what else this shared machine runs, and the raw stubs most
# tests use do not retry a refusal, so a lateness limit would make them fail by the machine's load.
TEST_DEFAULTS = {"TASKMEM_MAX_LOOP_LAG_MS": "60000"}


class ServerProcess:
    """One server process. start() returns once it accepts calls; its port stays the same across restarts."""

    def __init__(self, database: Path, *extra_args: str, env: dict[str, str] | None = None,
                 command: tuple[str, ...] = (sys.executable, "-m", "taskmem")) -> None:
        self.database = database
        self.extra_args = extra_args
        self.command = command  # how `taskmem` runs: this interpreter's module, or an installed script
        self.env = {**os.environ, **TEST_DEFAULTS, **(env or {})}
        self.address = ""
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []
        self._drainer: threading.Thread | None = None

    @property
    def database_setting(self) -> str:
        """What --database says: the SQLite file, or the PostgreSQL URL that stands for it."""
        if ENGINE == "postgres":
            from tests.support.postgres import database_url

            return database_url(str(self.database))
        return str(self.database)

    def sql(self, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Run one statement (with ? marks) on the server's database directly, as an operator would, on
        either engine; returns its rows."""
        if ENGINE == "postgres":
            import psycopg

            with psycopg.connect(self.database_setting, autocommit=True) as connection:
                cursor = connection.execute(statement.replace("?", "%s"), params)  # type: ignore[arg-type]
                return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        connection = sqlite3.connect(self.database)
        try:
            rows = connection.execute(statement, params).fetchall()
            connection.commit()
            return rows
        finally:
            connection.close()

    def start(self, timeout: float = 120.0) -> str:  # a hang guard: a busy shared machine can take a minute
        listen = self.address or "127.0.0.1:0"
        self.process = subprocess.Popen(
            [*self.command, "serve", "--listen", listen,
             "--database", self.database_setting, *self.extra_args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=self.env,
        )
        assert self.process.stdout is not None
        # Lines are read on a thread so the timeout holds even when the server prints nothing and never exits.
        lines: queue.Queue[str] = queue.Queue()
        started = threading.Event()
        self._drainer = threading.Thread(target=self._drain, args=(self.process, lines, started), daemon=True)
        self._drainer.start()
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                break
            if not line:  # the server closed its output: it is exiting
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(timeout=10)
                break
            if line.startswith(READY_PREFIX):
                started.set()
                self.address = line[len(READY_PREFIX):].strip()
                return self.address
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
            raise RuntimeError(f"server did not start within {timeout} s (killed):\n" + "".join(self.output))
        raise RuntimeError("server did not start:\n" + "".join(self.output))

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send sig and wait for the exit code; `output` then holds every line the server printed."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        code = self.process.wait(timeout=HANG_GUARD_SECONDS)  # a busy machine's graceful shutdown takes its time
        if self._drainer is not None:
            self._drainer.join(timeout=HANG_GUARD_SECONDS)
        return code

    def _drain(self, process: subprocess.Popen[str], lines: queue.Queue[str], started: threading.Event) -> None:
        # Keep reading so a chatty server never blocks on a full pipe; until it is ready, hand each line to
        # start() too ("" says it closed its output).
        assert process.stdout is not None
        for line in process.stdout:
            self.output.append(line)
            if not started.is_set():
                lines.put(line)
        lines.put("")

    def restart(self) -> str:
        self.stop()
        return self.start()


class ServerOnDatabase(ServerProcess):
    """A server on a database setting as given (an SQLite file or a PostgreSQL URL), whatever --engine says:
    for tests of PostgreSQL itself (replicas, leases, copy)."""

    def __init__(self, setting: str, *extra_args: str, env: dict[str, str] | None = None) -> None:
        super().__init__(Path(setting), *extra_args, env=env)
        self.setting = setting

    @property
    def database_setting(self) -> str:
        return self.setting
