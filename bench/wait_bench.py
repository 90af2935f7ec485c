"""Wait scheduler benchmark: what 10,000 open timers cost, and how late 1,000 timers due together resolve.

Starts `taskmem serve` on a temporary database, then
1. measures the server's RSS and CPU with no waits (idle baseline);
2. creates 10,000 timer waits due in an hour and measures RSS and idle CPU again
   (CPU from /proc/<pid>/stat over --idle-seconds);
3. creates 1,000 timer waits all due within the same second (--linked: each linked
   to a task, so each resolution also writes the task's message and metadata) and
   reports resolution lateness (end_time − (create_time + duration)) p50/p99/max.
Goals (issue 4): idle CPU ≈ 0, lateness p99 ≤ 50 ms.

    .venv/bin/python bench/wait_bench.py [--open 10000] [--due 1000] [--idle-seconds 10] [--linked]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from pathlib import Path

import grpc
from google.protobuf import duration_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_service_pb2 as tpb  # noqa: E402
from taskmem.v1 import wait_pb2  # noqa: E402
from taskmem.v1 import wait_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime


async def idle_cpu_percent(pid: int, seconds: float) -> float:
    before = cpu_seconds(pid)
    await asyncio.sleep(seconds)
    return 100 * (cpu_seconds(pid) - before) / seconds


def duration(us: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


async def create_many(waits: WaitServiceStub, requests: list[pb.CreateWaitRequest],
                      concurrency: int = 64) -> list[wait_pb2.Wait]:
    created: list[wait_pb2.Wait] = []
    queue = list(reversed(requests))

    async def worker() -> None:
        while queue:
            created.append((await waits.CreateWait(queue.pop())).wait)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return created


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as directory:
        server = ServerProcess(Path(directory) / "bench.db", env={"TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0"})
        address = server.start()
        assert server.process is not None
        pid = server.process.pid
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                waits, tasks = WaitServiceStub(channel), TaskServiceStub(channel)
                await asyncio.sleep(1)
                base_rss, base_cpu = rss_mib(pid), await idle_cpu_percent(pid, args.idle_seconds)
                print(f"no waits:            RSS {base_rss:7.1f} MiB   idle CPU {base_cpu:5.2f} %")

                hour = pb.CreateWaitRequest(target=wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(
                    duration=duration(3600 * 1_000_000))))
                started = time.perf_counter()
                await create_many(waits, [hour] * args.open)
                print(f"created {args.open} timer waits in {time.perf_counter() - started:.1f} s")
                await asyncio.sleep(1)
                rss, cpu = rss_mib(pid), await idle_cpu_percent(pid, args.idle_seconds)
                print(f"{args.open} open timers: RSS {rss:7.1f} MiB   idle CPU {cpu:5.2f} %"
                      f"   (+{rss - base_rss:.1f} MiB, {1024 * (rss - base_rss) / args.open:.2f} KiB per wait)")

                task_ids = [""] * args.due
                if args.linked:
                    made = await asyncio.gather(*(tasks.CreateTask(tpb.CreateTaskRequest(name=f"t{i}"))
                                                  for i in range(args.due)))
                    task_ids = [m.task.id for m in made]
                due_at = math.ceil(time.time()) + args.lead_seconds  # a whole second, far enough to create them all

                def due_request(task_id: str) -> pb.CreateWaitRequest:
                    left = int((due_at - time.time()) * 1_000_000)
                    return pb.CreateWaitRequest(task_id=task_id, target=wait_pb2.WaitTarget(
                        timer=wait_pb2.TimerTarget(duration=duration(left))))

                # Build each request just before it is sent, so every due time falls in the same second.
                queue = list(task_ids)
                due: list[wait_pb2.Wait] = []

                async def worker() -> None:
                    while queue:
                        due.append((await waits.CreateWait(due_request(queue.pop()))).wait)

                await asyncio.gather(*(worker() for _ in range(64)))
                late_creates = sum(1 for w in due if w.create_time.ToMicroseconds() >= due_at * 1_000_000)
                assert not late_creates, f"{late_creates} waits were created after their due second; raise --lead-seconds"
                await asyncio.sleep(max(0.0, due_at - time.time()) + 3)
                lateness = []
                for wait in due:
                    ended = (await waits.GetWait(pb.GetWaitRequest(wait_id=wait.id))).wait
                    assert ended.status == wait_pb2.WAIT_STATUS_RESOLVED, ended
                    expected = wait.create_time.ToMicroseconds() + wait.target.timer.duration.ToMicroseconds()
                    lateness.append((ended.end_time.ToMicroseconds() - expected) / 1000)
                spread = max(w.create_time.ToMicroseconds() + w.target.timer.duration.ToMicroseconds() for w in due) \
                    - min(w.create_time.ToMicroseconds() + w.target.timer.duration.ToMicroseconds() for w in due)
                kind = "linked to tasks" if args.linked else "unlinked"
                print(f"{args.due} timers due within {spread / 1000:.1f} ms ({kind}): lateness"
                      f" p50 {percentile(lateness, 50):.1f} ms, p99 {percentile(lateness, 99):.1f} ms,"
                      f" max {max(lateness):.1f} ms")
        finally:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--open", type=int, default=10_000, help="open timer waits (default 10000)")
    parser.add_argument("--due", type=int, default=1_000, help="timers due in the same second (default 1000)")
    parser.add_argument("--idle-seconds", type=float, default=10.0, help="CPU sampling window (default 10)")
    parser.add_argument("--lead-seconds", type=int, default=8, help="how far ahead the due second is (default 8)")
    parser.add_argument("--linked", action="store_true", help="link each due timer to a task of its own")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
