"""Wait races: can a file wait be made to read outside its root, and can slow HTTP bodies delay other waits?

Starts `taskmem serve` with a file root (the workspaces) and two loopback ports allowed for http waits, then
1. symlink flips: a thread keeps swapping, by atomic rename, a path in the workspace between a
   harmless regular file and a symbolic link to an outside file holding a secret (and a folder
   between a real one and a link to an outside folder), while --racers file waits look for the
   secret every 0.1 s. A wait that resolves read the outside file: an "outside read". Hard links to
   the outside file are raced the same way;
2. slow bodies: --trickles http waits poll a server that sends headers then one byte every 0.5 s,
   and meanwhile --probes unrelated waits are measured: file waits (the file is written just
   after the wait is created) and http waits on a server that answers at once. Their delay is the
   time from the condition holding to the wait resolving; the goal is ≤ poll interval + 1 s.

    .venv/bin/python bench/wait_races.py [--racers 300] [--trickles 8] [--probes 20]

Goals (issue 12): 0 outside reads; worst unrelated delay ≤ poll interval + 1 s.
"""

from __future__ import annotations

import argparse
import asyncio
import http.server
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import duration_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_service_pb2 as tpb  # noqa: E402
from taskmem.v1 import wait_pb2  # noqa: E402
from taskmem.v1 import wait_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402
from tests.support.ports import unused_port  # noqa: E402
from tests.support.trickle_http import TrickleServer  # noqa: E402

SECRET = "OUTSIDE-SECRET-7f3a"
POLL_SECONDS = 0.1
POLL = duration_pb2.Duration(nanos=int(POLL_SECONDS * 1e9))


class Flipper:
    """Swaps `path` between a regular file (or folder) and a link to `outside`, atomically, until stopped."""

    def __init__(self, path: Path, outside: Path, folder: bool) -> None:
        self.path, self.outside, self.folder = path, outside, folder
        self.stopped = threading.Event()
        self.flips = 0

    def _harmless(self, at: Path) -> None:
        if self.folder:
            at.mkdir()
            (at / "secret.txt").write_text("harmless")
        else:
            at.write_text("harmless")

    def run(self) -> None:
        n = 0
        while not self.stopped.is_set():
            n += 1
            temporary = self.path.with_name(f".{self.path.name}.{n}")
            if n % 2:
                os.symlink(self.outside, temporary)
            else:
                self._harmless(temporary)
            if not self.folder:
                os.replace(temporary, self.path)
            else:  # a folder cannot be renamed over a link or a folder: clear the place first (not atomic)
                if self.path.is_symlink():
                    self.path.unlink()
                else:
                    old = self.path.with_name(f".{self.path.name}.old{n}")
                    os.rename(self.path, old)
                    (old / "secret.txt").unlink()
                    old.rmdir()
                os.rename(temporary, self.path)
            self.flips += 1


async def ended(waits: WaitServiceStub, wait_id: str) -> wait_pb2.Wait:
    last = None
    async for response in waits.WatchWait(pb.WatchWaitRequest(wait_id=wait_id)):
        last = response.wait
    assert last is not None
    return last


async def file_wait(tasks: TaskServiceStub, waits: WaitServiceStub, workspace: Path, path: str,
                    contains: str, timeout_seconds: int) -> wait_pb2.Wait:
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="race", workspace=str(workspace)))).task
    return (await waits.CreateWait(pb.CreateWaitRequest(
        task_id=task.id, target=wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=path, contains=contains)),
        poll_interval=POLL, timeout=duration_pb2.Duration(seconds=timeout_seconds)))).wait


async def race_links(channel: grpc.aio.Channel, root: Path, outside: Path, racers: int) -> dict[str, int]:
    tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
    workspace = root / "racing"
    workspace.mkdir()
    (workspace / "target.txt").write_text("harmless")
    (workspace / "folder").mkdir()
    (workspace / "folder" / "secret.txt").write_text("harmless")
    os.link(outside / "secret.txt", workspace / "hard.txt")
    flippers = [Flipper(workspace / "target.txt", outside / "secret.txt", folder=False),
                Flipper(workspace / "folder", outside, folder=True)]
    threads = [threading.Thread(target=f.run, daemon=True) for f in flippers]
    for thread in threads:
        thread.start()
    paths = ["target.txt", "folder/secret.txt", "hard.txt"]
    try:
        created = await asyncio.gather(*(file_wait(tasks, waits, workspace, paths[n % 3], SECRET, 5)
                                         for n in range(racers)))
        outcomes = await asyncio.gather(*(ended(waits, w.id) for w in created))
    finally:
        for flipper in flippers:
            flipper.stopped.set()
        for thread in threads:
            thread.join()
    counts: dict[str, int] = {"flips": sum(f.flips for f in flippers)}
    for wait in outcomes:
        name = wait_pb2.WaitStatus.Name(wait.status).removeprefix("WAIT_STATUS_").lower()
        counts[name] = counts.get(name, 0) + 1
    counts["outside reads"] = sum(1 for w in outcomes if w.status == wait_pb2.WAIT_STATUS_RESOLVED)
    return counts


class _Quick(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:
        pass


async def race_slow_bodies(channel: grpc.aio.Channel, root: Path, trickles: int, probes: int,
                           ports: tuple[int, int]) -> dict[str, float]:
    tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
    quick = http.server.ThreadingHTTPServer(("127.0.0.1", ports[0]), _Quick)
    threading.Thread(target=quick.serve_forever, daemon=True).start()
    quick_url = f"http://127.0.0.1:{quick.server_address[1]}/ready"
    workspace = root / "unrelated"
    workspace.mkdir()
    file_delays: list[float] = []
    http_delays: list[float] = []
    with TrickleServer(port=ports[1]) as slow_url:
        slow = [(await waits.CreateWait(pb.CreateWaitRequest(
            target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=f"{slow_url}/{n}", body_contains="never")),
            poll_interval=POLL))).wait for n in range(trickles)]
        await asyncio.sleep(2.0)  # every trickling body is being read by now

        async def one_file(n: int) -> None:
            wait = await file_wait(tasks, waits, workspace, f"flag-{n}", "", 30)
            (workspace / f"flag-{n}").write_text("")
            written = time.time()
            done = await ended(waits, wait.id)  # a wait that timed out counts with its whole delay (30 s)
            file_delays.append(done.end_time.ToMicroseconds() / 1e6 - written)

        async def one_http() -> None:
            wait = (await waits.CreateWait(pb.CreateWaitRequest(
                target=wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=quick_url)), poll_interval=POLL,
                timeout=duration_pb2.Duration(seconds=30)))).wait
            done = await ended(waits, wait.id)
            http_delays.append((done.end_time.ToMicroseconds() - done.create_time.ToMicroseconds()) / 1e6)

        for _ in range(probes):  # one after another, all while the bodies trickle
            await asyncio.gather(one_file(len(file_delays)), one_http())
        for wait in slow:
            await waits.CancelWait(pb.CancelWaitRequest(wait_id=wait.id))
    quick.shutdown()
    return {"file wait worst delay s": max(file_delays), "http wait worst delay s": max(http_delays)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--racers", type=int, default=300)
    parser.add_argument("--trickles", type=int, default=8)
    parser.add_argument("--probes", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        root, outside, data = base / "root", base / "outside", base / "data"
        for folder in (root, outside, data):
            folder.mkdir()
        (outside / "secret.txt").write_text(SECRET)
        ports = (unused_port(), unused_port())  # the quick and the trickling site, listed before the server starts
        env = {"TASKMEM_WAIT_FILE_ROOTS": str(root),
               "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": ",".join(f"127.0.0.1:{port}" for port in ports),
               "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": str(POLL_SECONDS), "TASKMEM_LOG_LEVEL": "ERROR"}
        server = ServerProcess(data / "taskmem.db", "--embedding-backend", "none", env=env)
        address = server.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                links = await race_links(channel, root, outside, args.racers)
                print(f"symlink and hard-link races: {args.racers} file waits looking for the outside secret")
                for name, value in links.items():
                    print(f"  {name:<16} {value}")
                delays = await race_slow_bodies(channel, root, args.trickles, args.probes, ports)
                print(f"slow bodies: {args.trickles} http waits on a body trickling 1 byte / 0.5 s; "
                      f"{args.probes} unrelated file and http waits, poll interval {POLL_SECONDS:g} s")
                for name, value in delays.items():
                    print(f"  {name:<24} {value:.3f}")
                worst = max(delays.values())
                print(f"outside reads {links['outside reads']} (goal 0); worst unrelated delay {worst:.3f} s "
                      f"(goal ≤ {POLL_SECONDS + 1:g} s)")
        finally:
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
