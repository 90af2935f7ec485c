"""Start `taskmem mcp --http` as a real process and wait for the address it serves on."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

READY_PREFIX = "taskmem mcp: serving on "


class McpHttpProcess:
    """`taskmem mcp --http HOST:0 <args>` (HOST 127.0.0.1 unless given); start() returns the endpoint URL."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, host: str = "127.0.0.1") -> None:
        self.args = args
        self.host = host
        self.env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[str] | None = None
        self.output: list[str] = []

    def start(self, timeout: float = 120.0) -> str:  # a hang guard: a busy shared machine can take a minute
        self.process = subprocess.Popen([sys.executable, "-m", "taskmem", "mcp", "--http", f"{self.host}:0", *self.args],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=self.env)
        assert self.process.stderr is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                break
            self.output.append(line)
            if line.startswith(READY_PREFIX):
                threading.Thread(target=self._drain, daemon=True).start()
                return line[len(READY_PREFIX):].strip()
        raise RuntimeError("taskmem mcp did not start:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self.output.append(line)

    def stop(self) -> int:
        assert self.process is not None
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(timeout=15)
