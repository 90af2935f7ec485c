"""A full disk for real: the database on a small tmpfs, written until refused, written while full, space given
back, the server SIGKILLed and restarted. Needs root (mount); Linux only.

1. mounts a tmpfs of --size-mib (default 12) and starts `taskmem serve` with its database there;
2. --writers concurrent writers post ~2 KB messages, each with a request_id, until the first refusal, then go on
   writing for --full-seconds while the disk stays full (every answer's code is counted);
3. while full: a read of every acknowledged message and a health check;
4. space back: the tmpfs is remounted --grow-mib larger (the server is not touched); the time from there to the
   first write acknowledged again is "time to resume";
5. a few more writes, then SIGKILL, restart on the same file, and every acknowledged id is looked for.

    sudo .venv/bin/python bench/disk_full_run.py [--size-mib 12] [--grow-mib 64] [--writers 8] [--full-seconds 5]

Goal (issue 41): only OK and RESOURCE_EXHAUSTED/STORAGE_FULL answered; 0 acknowledged writes lost; writes resume
without a restart.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_status import rpc_status
from google.rpc import error_details_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

BODY = "x" * 2000


def _reason(error: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    for detail in status.details if status else []:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason.removeprefix("ERROR_REASON_")
    return "-"


class Run:
    def __init__(self) -> None:
        self.acknowledged: list[str] = []
        self.codes: collections.Counter[str] = collections.Counter()
        self.first_refusal = 0.0
        self.sent = 0

    async def post(self, tasks: TaskServiceStub, task_id: str) -> bool:
        n = self.sent
        self.sent += 1
        try:
            posted = await tasks.PostMessage(pb.PostMessageRequest(
                task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=f"{n} {BODY}", request_id=f"w-{n}"),
                timeout=30)
        except grpc.aio.AioRpcError as error:
            self.codes[f"{error.code().name}/{_reason(error)}"] += 1
            if not self.first_refusal:
                self.first_refusal = time.monotonic()
            return False
        self.codes["OK"] += 1
        self.acknowledged.append(posted.message.id)
        return True


async def _ids(tasks: TaskServiceStub, task_id: str) -> set[str]:
    found, token = set(), ""
    while True:
        page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=500, page_token=token))
        found |= {m.id for m in page.messages}
        token = page.next_page_token
        if not token:
            return found


def _metric(server: ServerProcess, name: str) -> float:
    prefix = "taskmem: metrics on "
    url = next(line for line in server.output if line.startswith(prefix))[len(prefix):].strip()
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return sum(float(line.split()[-1]) for line in text.splitlines() if line.startswith(name + " "))


async def _drive(server: ServerProcess, mount: Path, args: argparse.Namespace) -> tuple[Run, str, dict[str, float]]:
    run, figures = Run(), {}
    async with grpc.aio.insecure_channel(server.address) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="disk full run"))).task.id
        started = time.monotonic()

        async def writer(until: float | None) -> None:
            while True:
                if until is None and run.first_refusal:
                    return
                if until is not None and time.monotonic() >= until:
                    return
                await run.post(tasks, task_id)

        await asyncio.gather(*(writer(None) for _ in range(args.writers)))
        figures["seconds to fill"] = run.first_refusal - started
        figures["acknowledged before full"] = len(run.acknowledged)
        full_codes_before = collections.Counter(run.codes)
        await asyncio.gather(*(writer(time.monotonic() + args.full_seconds) for _ in range(args.writers)))
        figures["writes tried while full"] = sum((run.codes - full_codes_before).values())
        figures["acknowledged while full"] = (run.codes - full_codes_before)["OK"]
        figures["reads while full: acknowledged ids found"] = len(await _ids(tasks, task_id) & set(run.acknowledged))
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        figures["health while full is SERVING"] = float(health.status == health_pb2.HealthCheckResponse.SERVING)
        figures["taskmem_storage_full_writes_total"] = _metric(server, "taskmem_storage_full_writes_total")

        grown = time.monotonic()
        subprocess.run(["mount", "-o", f"remount,size={args.grow_mib}m", str(mount)], check=True)
        while not await run.post(tasks, task_id):
            await asyncio.sleep(0.01)
        figures["seconds from space back to a write acknowledged"] = time.monotonic() - grown
        for _ in range(50):
            await run.post(tasks, task_id)
    return run, task_id, figures


async def _count_lost(server: ServerProcess, task_id: str, acknowledged: list[str]) -> int:
    async with grpc.aio.insecure_channel(server.address) as channel:
        found = await _ids(TaskServiceStub(channel), task_id)
    return len(set(acknowledged) - found)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mib", type=int, default=12)
    parser.add_argument("--grow-mib", type=int, default=64)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--full-seconds", type=float, default=5.0)
    args = parser.parse_args()
    if os.geteuid() != 0 or sys.platform != "linux":
        print("needs root on Linux (mount -t tmpfs); tests/test_disk_full.py does the same without root")
        return 2
    mount = Path(tempfile.mkdtemp(prefix="taskmem-full-"))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size_mib}m", "tmpfs", str(mount)], check=True)
    server = ServerProcess(mount / "taskmem.db", "--metrics-listen", "127.0.0.1:0")
    try:
        server.start(timeout=120)
        run, task_id, figures = asyncio.run(_drive(server, mount, args))
        server.stop(signal.SIGKILL)
        restarted = time.monotonic()
        server.start(timeout=120)
        figures["seconds to restart after SIGKILL"] = time.monotonic() - restarted
        figures["acknowledged in all"] = len(run.acknowledged)
        figures["acknowledged but lost after SIGKILL + restart"] = asyncio.run(
            _count_lost(server, task_id, run.acknowledged))
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
        subprocess.run(["umount", str(mount)], check=False)
        mount.rmdir()
    print(f"tmpfs {args.size_mib} MiB, {args.writers} writers of ~2 KB messages, {args.full_seconds} s written while full")
    for name, value in figures.items():
        print(f"  {name:52} {value:.3f}" if isinstance(value, float) and not value.is_integer() else
              f"  {name:52} {int(value)}")
    print("  codes answered:")
    for code, count in sorted(run.codes.items()):
        print(f"    {code:50} {count}")
    unexpected = set(run.codes) - {"OK", "RESOURCE_EXHAUSTED/STORAGE_FULL"}
    return 1 if unexpected or figures["acknowledged but lost after SIGKILL + restart"] else 0


if __name__ == "__main__":
    sys.exit(main())
