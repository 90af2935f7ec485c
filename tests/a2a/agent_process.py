"""Start an A2A server process on a free loopback port: the example agent server on taskmem
(clients/python/examples/a2a_agent_server.py) or `taskmem a2a`."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples" / "a2a_agent_server.py"


class AgentProcess:
    """One A2A server; start() returns its URL once it prints the line starting with ready_prefix."""

    def __init__(self, taskmem_address: str, *, front_end: bool = False, extra_args: tuple[str, ...] = ()) -> None:
        if front_end:
            self.command = [sys.executable, "-m", "taskmem", "a2a", "--address", taskmem_address,
                            "--listen", "127.0.0.1:0", "--grpc-listen", "127.0.0.1:0", *extra_args]
            self.ready_prefix = "taskmem a2a: serving on "
        else:
            self.command = [sys.executable, str(EXAMPLE), "--taskmem", taskmem_address, "--listen", "127.0.0.1:0",
                            *extra_args]
            self.ready_prefix = "a2a agent: serving on "
        self.url = ""
        self.output: list[str] = []
        self.process: subprocess.Popen[str] | None = None

    def start(self, timeout: float = 120.0) -> str:  # a hang guard: a busy shared machine can take a minute
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.output.append(line)
            if line.startswith(self.ready_prefix):
                self.url = line[len(self.ready_prefix):].strip()
                threading.Thread(target=self._drain, daemon=True).start()
                return self.url
        raise RuntimeError("A2A server did not start:\n" + "".join(self.output))

    def _drain(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
