"""Start clients/python/examples/a2a_agent_server.py (an a2a-sdk server on taskmem) on a free loopback port."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples" / "a2a_agent_server.py"
READY_PREFIX = "a2a agent: serving on "


class AgentProcess:
    def __init__(self, taskmem_address: str) -> None:
        self.taskmem_address = taskmem_address
        self.url = ""
        self.output: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 30.0) -> str:
        self.process = subprocess.Popen(
            [sys.executable, str(EXAMPLE), "--taskmem", self.taskmem_address, "--listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if line.startswith(READY_PREFIX):
                self.url = line[len(READY_PREFIX):].strip()
                threading.Thread(target=self._drain, daemon=True).start()
                return self.url
        raise RuntimeError("agent server did not start:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
