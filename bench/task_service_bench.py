"""TaskService throughput against a bare grpc.aio echo server, side by side in one run.

Starts `taskmem serve` (temporary database) and an echo server (a grpc.aio server whose one
method returns its request bytes), then drives each with the same grpc.aio client and the same
concurrency, and prints requests/s for RecordAction (1 KB input), GetTask (a 50-item plan) and
echo, with their ratios to echo. Goals: RecordAction ≥ 0.8× echo, GetTask ≥ 0.9× echo.

The 2 cores are shared, so one burst of other work can skew a single long measurement. The run is
therefore split into rounds — echo, RecordAction, GetTask, echo again — and each ratio is taken
against the echo figures of its own round; the medians over the rounds are reported. Beside the
ratios it prints the server's (and the echo server's) CPU time per request, read from /proc: that
figure holds when the neighbours' load stretches the requests/s of a round. It also splits each
server's CPU by thread (the main thread runs the event loop; in taskmem the busiest other "python"
thread during RecordAction is the SQLite writer; "event_engine" threads are gRPC's).

    .venv/bin/python bench/task_service_bench.py [--seconds 2] [--rounds 5] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from google.protobuf import struct_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

ECHO_SERVER = """
import asyncio, grpc
async def echo(request, context):
    return request
async def main():
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler("bench.Echo", {
        "Echo": grpc.unary_unary_rpc_method_handler(echo)})
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"echo on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU time so far of each thread of a process, by "tid name" (the main thread's tid is the pid)."""
    threads = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except FileNotFoundError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat.rsplit(")", 1)[1].split()
        threads[f"{task.name} {name}"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return threads


async def drive(call: Callable[[], Awaitable[object]], seconds: float, concurrency: int,
                pid: int | None = None, cpu_per_call: list[float] | None = None,
                threads: dict[str, list[float]] | None = None) -> float:
    """Requests per second completed by `concurrency` callers looping for `seconds`; with pid, the
    process's CPU µs per request are appended to cpu_per_call, and each thread's to threads."""
    cpu_before = cpu_seconds(pid) if pid is not None else 0.0
    threads_before = thread_cpu_seconds(pid) if pid is not None and threads is not None else {}
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    if pid is not None and cpu_per_call is not None:
        cpu_per_call.append((cpu_seconds(pid) - cpu_before) / done * 1e6)
    if pid is not None and threads is not None:
        for thread, used in thread_cpu_seconds(pid).items():
            threads.setdefault(thread, []).append((used - threads_before.get(thread, 0.0)) / done * 1e6)
    return done / (time.perf_counter() - start)


async def main(seconds: float, rounds: int, concurrency: int) -> None:
    figures: dict[str, list[float]] = {"echo": [], "record": [], "get": [], "record_ratio": [], "get_ratio": []}
    cpu: dict[str, list[float]] = {"echo": [], "record": [], "get": []}  # server CPU µs per request
    # Per thread of each server, µs per request: where the CPU goes (the main thread runs the event loop).
    threads: dict[str, dict[str, list[float]]] = {"echo": {}, "record": {}, "get": {}}
    with tempfile.TemporaryDirectory() as tmp:
        taskmem = ServerProcess(Path(tmp) / "bench.db", "--log-level", "WARNING")
        address = taskmem.start()
        echo = subprocess.Popen([sys.executable, "-c", ECHO_SERVER], stdout=subprocess.PIPE, text=True)
        assert echo.stdout is not None
        echo_address = echo.stdout.readline().split()[-1]
        try:
            async with grpc.aio.insecure_channel(address) as channel, \
                    grpc.aio.insecure_channel(echo_address) as echo_channel:
                tasks = TaskServiceStub(channel)
                plan = [task_pb2.PlanItemSpec(id=f"step-{i}", title=f"Step {i}: do the thing number {i}",
                                              depends_on=[f"step-{i - 1}"] if i else []) for i in range(50)]
                task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="bench", plan=plan))).task.id
                payload = struct_pb2.Struct()
                payload.update({"command": "x" * 1000})
                record = pb.RecordActionRequest(task_id=task_id, summary="bench action", input=payload,
                                                status=task_pb2.ACTION_STATUS_SUCCEEDED)
                get = pb.GetTaskRequest(task_id=task_id)
                echo_call = echo_channel.unary_unary("/bench.Echo/Echo")
                echo_bytes = record.SerializeToString()

                for warm in (lambda: tasks.GetTask(get), lambda: tasks.RecordAction(record),
                             lambda: echo_call(echo_bytes)):
                    await drive(warm, 1.0, concurrency)
                server_pid = taskmem.process.pid if taskmem.process is not None else None
                for _ in range(rounds):
                    echo_before = await drive(lambda: echo_call(echo_bytes), seconds, concurrency, echo.pid, cpu["echo"],
                                              threads["echo"])
                    record_rps = await drive(lambda: tasks.RecordAction(record), seconds, concurrency, server_pid,
                                             cpu["record"], threads["record"])
                    get_rps = await drive(lambda: tasks.GetTask(get), seconds, concurrency, server_pid, cpu["get"],
                                          threads["get"])
                    echo_rps = (echo_before + await drive(lambda: echo_call(echo_bytes), seconds, concurrency,
                                                          echo.pid, cpu["echo"])) / 2
                    for name, value in (("echo", echo_rps), ("record", record_rps), ("get", get_rps),
                                        ("record_ratio", record_rps / echo_rps), ("get_ratio", get_rps / echo_rps)):
                        figures[name].append(value)
        finally:
            echo.terminate()
            taskmem.stop()
    median = {name: statistics.median(values) for name, values in figures.items()}
    spread = {name: f"{min(values):.2f}–{max(values):.2f}" for name, values in figures.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    cpu_spread = {name: f"{min(values):.0f}–{max(values):.0f}" for name, values in cpu.items()}
    print(f"concurrency {concurrency}, {rounds} rounds of {seconds:g} s per measurement; medians over rounds;"
          f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"echo (1 KB)               {median['echo']:8.0f} req/s"
          f"                                          echo server CPU {cpu_median['echo']:5.0f} µs/req"
          f" ({cpu_spread['echo']})")
    print(f"RecordAction (1 KB input) {median['record']:8.0f} req/s  {median['record_ratio']:.2f}x echo"
          f"  (rounds {spread['record_ratio']}; goal >= 0.80)  server CPU {cpu_median['record']:5.0f} µs/req"
          f" ({cpu_spread['record']})")
    print(f"GetTask (50-item plan)    {median['get']:8.0f} req/s  {median['get_ratio']:.2f}x echo"
          f"  (rounds {spread['get_ratio']}; goal >= 0.90)  server CPU {cpu_median['get']:5.0f} µs/req"
          f" ({cpu_spread['get']})")
    print("server CPU µs/request by thread (median over rounds; threads under 5 µs left out):")
    for name, by_thread in threads.items():
        busy = {thread: statistics.median(values) for thread, values in by_thread.items()
                if statistics.median(values) >= 5}
        print(f"  {name:<6} " + ", ".join(f"{thread} {used:.0f}" for thread, used in
                                         sorted(busy.items(), key=lambda item: -item[1])))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=64)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.seconds, arguments.rounds, arguments.concurrency))
