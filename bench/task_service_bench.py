"""TaskService throughput against a bare grpc.aio echo server, side by side in one run, as users run it.

Starts the server `make run` starts — `taskmem serve --listen … --database …` with every other setting
at its default (admission with its loop-lag limit, INFO logging, reflection, the background loops) —
on a temporary database, and an echo server (a grpc.aio server whose one method returns its request
bytes). Each is driven over 4 channels × 32 calls in flight: taskmem through taskmem_client (what a
Python user runs: a deadline, a request_id on every write, retries with the client's limit of calls
in flight), echo through bare grpc.aio channels. It prints requests/s for
RecordAction (a 900-character summary), GetTask (a 50-item plan) and echo (the RecordAction request's
bytes), with their ratios to echo. Goals (issue 31): RecordAction ≥ 0.75× echo, GetTask ≥ 0.9× echo.

The 2 cores are shared, so one burst of other work can skew a single long measurement. The run is
therefore split into rounds — echo, RecordAction, GetTask, echo again — and each ratio is taken
against the echo figures of its own round; the medians over the rounds are reported. With
`--compare CHECKOUT` a second taskmem server runs from another checkout's `server/` (e.g. a
`git worktree add /tmp/before main`), called through that checkout's own taskmem_client (from its
`clients/python/src`), and each round measures both, alternating, so a before/after pair of server and
client shares the machine's load. Beside the ratios it prints each server's CPU time per request, read
from /proc (it holds when the neighbours' load stretches a round's requests/s), split by thread (the
main thread runs the event loop; in taskmem the busiest other "python" thread during RecordAction is
the SQLite writer; "event_engine" threads are gRPC's), the client's own CPU time per request (this
process's), and the attempts the server refused as overloaded. `--bare-client` calls taskmem through
the generated stubs instead; `--server-env` changes a setting of every taskmem server.

    .venv/bin/python bench/task_service_bench.py [--seconds 2] [--rounds 5] [--channels 4] [--in-flight 32]
        [--compare CHECKOUT] [--bare-client] [--server-env TASKMEM_MAX_IN_FLIGHT_CALLS=256 ...]
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem_client import RetryPolicy, TaskmemClient  # noqa: E402

READY_PREFIX = "taskmem: serving on "
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


@dataclass
class Measured:
    """One measured series: requests/s per round, server CPU µs per request, the same by thread."""
    rps: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    threads: dict[str, list[float]] = field(default_factory=dict)
    ratio: list[float] = field(default_factory=list)
    client_cpu: list[float] = field(default_factory=list)  # this (the client's) process, µs per request


async def drive(calls: Sequence[Callable[[], Awaitable[object]]], seconds: float, in_flight: int,
                pid: int | None = None, measured: Measured | None = None) -> float:
    """Requests per second completed by `in_flight` callers per entry of `calls` (one per channel) looping
    for `seconds`; with pid and measured, the process's CPU µs per request and each thread's are kept."""
    cpu_before = cpu_seconds(pid) if pid is not None else 0.0
    threads_before = thread_cpu_seconds(pid) if pid is not None else {}
    client_before = cpu_seconds(os.getpid())
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(call: Callable[[], Awaitable[object]]) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker(call) for call in calls for _ in range(in_flight)))
    rps = done / (time.perf_counter() - start)
    if pid is not None and measured is not None:
        measured.cpu.append((cpu_seconds(pid) - cpu_before) / done * 1e6)
        measured.client_cpu.append((cpu_seconds(os.getpid()) - client_before) / done * 1e6)
        for thread, used in thread_cpu_seconds(pid).items():
            measured.threads.setdefault(thread, []).append((used - threads_before.get(thread, 0.0)) / done * 1e6)
    return rps


def start_listening(argv: Sequence[str]) -> tuple[subprocess.Popen[str], str]:
    """A bench server (echo, a ceiling) that prints its address as the last word of its first line: the process
    and the address."""
    process = subprocess.Popen(list(argv), stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    return process, process.stdout.readline().split()[-1]


def start_taskmem(database: Path, checkout: Path, settings: Sequence[str]) -> tuple[subprocess.Popen[str], str]:
    """`taskmem serve` from `checkout` with its defaults (as `make run` starts it), on a free loopback port."""
    env = {**os.environ, "PYTHONPATH": f"{checkout / 'server'}{os.pathsep}{checkout / 'clients/python/src'}"}
    env = {name: value for name, value in env.items() if not name.startswith("TASKMEM_")}
    env.update(setting.split("=", 1) for setting in settings)
    process = subprocess.Popen([sys.executable, "-m", "taskmem", "serve", "--listen", "127.0.0.1:0",
                                "--database", str(database)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(READY_PREFIX):
            return process, line[len(READY_PREFIX):].strip()
    raise RuntimeError(f"taskmem from {checkout} did not start")


def client_of(checkout: Path) -> tuple[type[TaskmemClient], type[RetryPolicy]]:
    """TaskmemClient and RetryPolicy of checkout's clients/python/src, imported beside this tree's own (the
    generated stubs stay this tree's), so each server is called through its own checkout's client."""
    if checkout == ROOT:
        return TaskmemClient, RetryPolicy
    ours = {name: module for name, module in sys.modules.items() if name.partition(".")[0] == "taskmem_client"}
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, str(checkout / "clients/python/src"))
    try:
        theirs = importlib.import_module("taskmem_client")
    finally:
        sys.path.remove(str(checkout / "clients/python/src"))
        for name in [name for name in sys.modules if name.partition(".")[0] == "taskmem_client"]:
            del sys.modules[name]
        sys.modules.update(ours)
    return theirs.TaskmemClient, theirs.RetryPolicy


class _BareClient:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.tasks = TaskServiceStub(channel)
        self.close = channel.close


class Target:
    """One taskmem server under test and its clients (one per channel)."""

    def __init__(self, name: str, process: subprocess.Popen[str], address: str, channels: int, bare: bool,
                 checkout: Path) -> None:
        self.name = name
        self.process = process
        self.retries = 0  # attempts the server refused (as overloaded) and the client sent again
        client, retry_policy = client_of(checkout)
        policy = retry_policy(on_retry=lambda error, attempt, pause: self._count_retry())
        # --bare-client: the generated stubs on bare channels (no metadata, deadline, request_id or retries).
        self.clients: list[TaskmemClient | _BareClient] = [
            _BareClient(grpc.aio.insecure_channel(address)) if bare else client(address, retry=policy)
            for _ in range(channels)]
        self.record = Measured()
        self.get = Measured()

    def _count_retry(self) -> None:
        self.retries += 1

    async def prepare(self, summary: str) -> None:
        plan = [task_pb2.PlanItemSpec(id=f"step-{i}", title=f"Step {i}: do the thing number {i}",
                                      depends_on=[f"step-{i - 1}"] if i else []) for i in range(50)]
        task_id = (await self.clients[0].tasks.CreateTask(pb.CreateTaskRequest(name="bench", plan=plan))).task.id
        self.record_request = pb.RecordActionRequest(task_id=task_id, summary=summary,
                                                     status=task_pb2.ACTION_STATUS_SUCCEEDED)
        self.get_request = pb.GetTaskRequest(task_id=task_id)

    def record_calls(self) -> list[Callable[[], Awaitable[object]]]:
        return [lambda client=client: client.tasks.RecordAction(self.record_request) for client in self.clients]

    def get_calls(self) -> list[Callable[[], Awaitable[object]]]:
        return [lambda client=client: client.tasks.GetTask(self.get_request) for client in self.clients]

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
        self.process.terminate()
        self.process.wait(10)


def report(label: str, measured: Measured, goal: float | None) -> str:
    goal_text = f"; goal >= {goal:.2f}" if goal is not None else ""
    ratio = (f"{statistics.median(measured.ratio):.2f}x echo (rounds {min(measured.ratio):.2f}–"
             f"{max(measured.ratio):.2f}{goal_text})" if measured.ratio else "")
    return (f"{label:<34} {statistics.median(measured.rps):7.0f} req/s  {ratio:<40} server CPU "
            f"{statistics.median(measured.cpu):5.0f} µs/req ({min(measured.cpu):.0f}–{max(measured.cpu):.0f}), client CPU "
            f"{statistics.median(measured.client_cpu):4.0f} µs/req")


def thread_line(label: str, measured: Measured) -> str:
    busy = {thread: statistics.median(values) for thread, values in measured.threads.items()
            if statistics.median(values) >= 5}
    return f"  {label:<22} " + ", ".join(f"{thread} {used:.0f}" for thread, used in
                                         sorted(busy.items(), key=lambda item: -item[1]))


async def main(arguments: argparse.Namespace) -> None:
    summary = ("bench action: " + "x" * 900)[:900]
    checkouts = [("this tree", ROOT)] + ([("compare", Path(arguments.compare).resolve())]
                                         if arguments.compare else [])
    echo_measured = Measured()
    with tempfile.TemporaryDirectory() as tmp:
        echo, echo_address = start_listening([sys.executable, "-c", ECHO_SERVER])
        targets: list[Target] = []
        try:
            for index, (name, checkout) in enumerate(checkouts):
                process, address = start_taskmem(Path(tmp) / f"bench{index}.db", checkout, arguments.server_env)
                targets.append(Target(name, process, address, arguments.channels, arguments.bare_client, checkout))
            for target in targets:
                await target.prepare(summary)
            echo_channels = [grpc.aio.insecure_channel(echo_address) for _ in range(arguments.channels)]
            echo_bytes = targets[0].record_request.SerializeToString()
            echo_calls = [lambda call=channel.unary_unary("/bench.Echo/Echo"): call(echo_bytes)
                          for channel in echo_channels]

            for target in targets:  # warm-up
                await drive(target.get_calls(), 1.0, arguments.in_flight)
                await drive(target.record_calls(), 1.0, arguments.in_flight)
            await drive(echo_calls, 1.0, arguments.in_flight)
            for _ in range(arguments.rounds):
                echo_before = await drive(echo_calls, arguments.seconds, arguments.in_flight, echo.pid, echo_measured)
                for target in targets:
                    pid = target.process.pid
                    target.record.rps.append(await drive(target.record_calls(),
                                                         arguments.seconds, arguments.in_flight, pid, target.record))
                    target.get.rps.append(await drive(target.get_calls(), arguments.seconds, arguments.in_flight,
                                                      pid, target.get))
                echo_rps = (echo_before + await drive(echo_calls, arguments.seconds, arguments.in_flight,
                                                      echo.pid, echo_measured)) / 2
                echo_measured.rps.append(echo_rps)
                for target in targets:
                    target.record.ratio.append(target.record.rps[-1] / echo_rps)
                    target.get.ratio.append(target.get.rps[-1] / echo_rps)
            for channel in echo_channels:
                await channel.close()
        finally:
            echo.terminate()
            for target in targets:
                await target.close()
    print(f"{arguments.channels} channels x {arguments.in_flight} calls in flight, {arguments.rounds} rounds of "
          f"{arguments.seconds:g} s per measurement; medians over rounds; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(report("echo (RecordAction's bytes)", echo_measured, None))
    for target in targets:
        print(report(f"RecordAction [{target.name}]", target.record, 0.75))
        print(report(f"GetTask (50 items) [{target.name}]", target.get, 0.90))
        print(f"  [{target.name}] attempts refused and retried over the whole run: {target.retries}")
    print("server CPU µs/request by thread (median over rounds; threads under 5 µs left out):")
    for target in targets:
        print(thread_line(f"RecordAction [{target.name}]", target.record))
        print(thread_line(f"GetTask [{target.name}]", target.get))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--in-flight", type=int, default=32, help="calls in flight per channel")
    parser.add_argument("--compare", help="another checkout whose server, called through its own client, is "
                        "measured in the same rounds")
    parser.add_argument("--bare-client", action="store_true",
                        help="call taskmem through the generated stubs on bare channels instead of taskmem_client")
    parser.add_argument("--server-env", action="append", default=[], metavar="TASKMEM_NAME=VALUE",
                        help="a setting other than the default for every server")
    asyncio.run(main(parser.parse_args()))
