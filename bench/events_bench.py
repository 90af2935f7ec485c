"""Event delivery to one TypeScript, one Go and one Python subscriber while a writer appends.

Starts `taskmem serve` (temporary database) and three subscriber processes, each on its own
client library (bench/subscribers/ts_subscriber.mjs on clients/ts, clients/go/internal/
benchsubscriber on clients/go, bench/subscribers/python_subscriber.py on clients/python), all
subscribed at once to one task's MESSAGE_POSTED events. A writer in this process then posts
messages at a fixed rate (open loop: each send at its scheduled time, not after the previous
reply), each carrying its send time. Every subscriber notes when each event arrives; this prints,
per subscriber, the events it received, events/s delivered, and the latency from the writer's
send (before the PostMessage call: includes the write's RPC and group commit) to receipt: p50,
p99, max; and the server's CPU time per message (from /proc). Goal (issue 44): 1,000 messages/s written
for 60 s, every event delivered to all three, append->receipt p99 <= 50 ms, nothing refused.
All processes share this machine's clock.

    .venv/bin/python bench/events_bench.py [--rate 1000] [--seconds 60] [--warmup 2]
                                           [--writer client|stub|ghz] [--attempts 8]
                                           [--server CHECKOUT | --ceiling]

--ceiling runs bench/events_ceiling_server.py in the server's place: a bare grpc.aio server that stores
nothing and only parses, answers and fans out each message — what no server in one Python process on
grpc.aio can do less than. Its figures beside taskmem's, on the same machine and load, say how much of a
shortfall is taskmem's own code and how much is the process model.

It also prints what the writer saw: calls that failed by final code (CANCELLED among them: gRPC
shedding what it had not started), attempts the server refused as overloaded (UNAVAILABLE,
ERROR_REASON_OVERLOADED) and the client retried after the server's hint, and the latency of each
accepted attempt (p50, p99, max; from when it left the client, after any pause and any wait under
the client's limit of calls in flight) beside that of the whole call with its retries and waits.

--writer client writes through taskmem_client (a request_id on every call, so the server
also stores an idempotency record); --writer stub through the bare generated stub, without one;
--writer ghz (the default, issue 44) with ghz (Go, `--rps`; installed in .tools/bin by the Makefile), so the writer is not a
Python process competing with the server for the 2 cores: each message's content is ghz's
`{{.TimestampUnixNano}}` at the call's start, and ghz's own report gives the writer's figures.

Needs the built TypeScript client (this runs `npm run build` in clients/ts) and Go.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem_client import RetryPolicy, TaskmemClient  # noqa: E402
from taskmem_client.errors import error_info  # noqa: E402
from task_service_bench import start_listening  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402


class CeilingProcess:
    """bench/events_ceiling_server.py in a process, with ServerProcess's start/stop/process."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> str:
        self.process, address = start_listening([sys.executable, str(ROOT / "bench/events_ceiling_server.py")])
        return address

    def stop(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()


@dataclass
class Subscriber:
    language: str
    process: asyncio.subprocess.Process


def build_subscribers(workdir: Path) -> dict[str, list[str]]:
    """The command of each subscriber (without its arguments), building what needs building."""
    subprocess.run(["npm", "run", "--silent", "build"], cwd=ROOT / "clients/ts", check=True,
                   stdout=subprocess.DEVNULL)
    go_binary = workdir / "benchsubscriber"
    go = shutil.which("go") or "/usr/local/go/bin/go"
    subprocess.run([go, "build", "-o", str(go_binary), "./internal/benchsubscriber"], cwd=ROOT / "clients/go",
                   check=True)
    return {
        "typescript": ["node", str(ROOT / "bench/subscribers/ts_subscriber.mjs")],
        "go": [str(go_binary)],
        "python": [sys.executable, str(ROOT / "bench/subscribers/python_subscriber.py")],
    }


async def post(tasks: TaskServiceStub, task_id: str, content: str) -> None:
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                  content=content))


@dataclass
class Writes:
    """What the writer saw: failed calls by final status code (their events are missing), refused
    attempts by reason (each retried by the client unless it was the last), the latency of each
    accepted attempt (the one that succeeded, from its start) and of each call (retries included)."""

    failures: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    accepted_ms: list[float] = field(default_factory=list)
    call_ms: list[float] = field(default_factory=list)

    def on_retry(self, error: grpc.aio.AioRpcError, attempt: int, sleep: float) -> None:
        """taskmem_client's RetryPolicy.on_retry: runs in the call's task, before its pause."""
        self.retries += 1
        info = error_info(error)
        reason = info.reason if info is not None else "no reason"
        self.refusals[f"{error.code().name} {reason}"] += 1

    def on_send(self) -> None:
        """taskmem_client's RetryPolicy.on_send: an attempt leaves, in the call's task."""
        attempt = _attempt_started.get(None)  # None: a call outside the measured writes
        if attempt is not None:
            attempt[0] = time.perf_counter()


async def sample_loop_lag(lags: list[float]) -> None:
    """The writer's own event loop lateness (ms), every 10 ms: a busy writer's loop delays replies it
    has already received, which then count in its latencies without being the server's."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(0.01)
        lags.append((loop.time() - before - 0.01) * 1000)


_attempt_started: contextvars.ContextVar[list[float]] = contextvars.ContextVar("attempt_started")


async def write_at_rate(tasks: TaskServiceStub, task_id: str, rate: float, seconds: float,
                        writes: Writes) -> tuple[int, float]:
    """Posts rate messages a second for seconds, each sent at its scheduled time; (sent, seconds taken)."""
    count = int(rate * seconds)
    in_flight: set[asyncio.Task[None]] = set()

    async def send() -> None:
        started = time.perf_counter()
        attempt = [started]
        _attempt_started.set(attempt)
        try:
            await post(tasks, task_id, str(time.time_ns()))
        except grpc.aio.AioRpcError as error:
            writes.failures[error.code().name] += 1
            return
        done = time.perf_counter()
        writes.accepted_ms.append((done - attempt[0]) * 1000)
        writes.call_ms.append((done - started) * 1000)

    start = time.perf_counter()
    for i in range(count):
        delay = start + i / rate - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        sending = asyncio.ensure_future(send())
        in_flight.add(sending)
        sending.add_done_callback(in_flight.discard)
    await asyncio.gather(*in_flight)
    return count, time.perf_counter() - start


GHZ = ROOT / ".tools/bin/ghz"


async def write_with_ghz(address: str, task_id: str, rate: float, seconds: float, writes: Writes) -> tuple[int, float]:
    """Posts rate messages a second for seconds with ghz (open loop: up to 512 calls in flight, so a slow
    reply does not hold the next send back); (sent, seconds taken)."""
    request = {"task_id": task_id, "role": "MESSAGE_ROLE_AGENT", "content": "{{.TimestampUnixNano}}"}
    process = await asyncio.create_subprocess_exec(
        str(GHZ), "--insecure", "--proto", str(ROOT / "proto/taskmem/v1/task_service.proto"), "-i", str(ROOT / "proto"),
        "--call", "taskmem.v1.TaskService.PostMessage", "-d", json.dumps(request), "--rps", str(int(rate)),
        "-n", str(int(rate * seconds)), "-c", "512", "--connections", "4", "--timeout", "20s", "-O", "json", address,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    stdout, stderr = await process.communicate()
    if not stdout.strip():
        raise RuntimeError(f"ghz failed: {stderr.decode().strip()}")
    report = json.loads(stdout)
    for code, count in (report.get("statusCodeDistribution") or {}).items():
        if code != "OK":
            writes.failures[code] += count
    for row in report.get("details") or []:
        if row.get("status") == "OK":
            writes.accepted_ms.append(row["latency"] / 1e6)
    writes.call_ms = writes.accepted_ms  # ghz does not retry: an attempt is the whole call
    return report["count"], report["total"] / 1e9


async def wait_until_subscribed(tasks: TaskServiceStub, task_id: str, subscribers: list[Subscriber]) -> None:
    """Posts "ready" until every subscriber has printed that it received one."""
    pending = {s.language: asyncio.ensure_future(s.process.stdout.readline()) for s in subscribers}  # type: ignore[union-attr]
    deadline = time.monotonic() + 60
    while any(not line.done() for line in pending.values()):
        assert time.monotonic() < deadline, f"subscribers not ready: {[k for k, v in pending.items() if not v.done()]}"
        await post(tasks, task_id, "ready")
        await asyncio.wait(pending.values(), timeout=0.5)
    for language, line in pending.items():
        assert line.result().strip() == b"ready", f"{language} subscriber: {line.result()!r}"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def report(language: str, lines: list[bytes], measured_from_ns: int, expected: int) -> str:
    samples = [tuple(map(int, line.split())) for line in lines if line.strip() and line.strip() != b"ready"]
    measured = [sample for sample in samples if sample[0] >= measured_from_ns]
    end_to_end = sorted((got - sent) / 1e6 for sent, _, got in measured)
    delivery = sorted((got - appended) / 1e6 for _, appended, got in measured)
    received = sorted(got for _, _, got in measured)
    span = (received[-1] - received[0]) / 1e9 if len(received) > 1 else float("nan")
    return (f"{language:<10} {len(measured):>6}/{expected:<6} {(len(received) - 1) / span:>8.0f}  "
            f"{percentile(end_to_end, 0.50):8.2f} {percentile(end_to_end, 0.99):8.2f} {end_to_end[-1]:8.2f}  "
            f"{percentile(delivery, 0.50):8.2f} {percentile(delivery, 0.99):8.2f} {delivery[-1]:8.2f}")


async def main(rate: float, seconds: float, warmup: float, writer: str, attempts: int,
               server_checkout: str | None, ceiling: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        commands = build_subscribers(Path(tmp))
        # --server CHECKOUT: that checkout's server/ (a before/after pair on the same machine and load).
        env = {"PYTHONPATH": str(Path(server_checkout).resolve() / "server")} if server_checkout else None
        server = CeilingProcess() if ceiling else ServerProcess(Path(tmp) / "bench.db", "--log-level", "WARNING",
                                                                 env=env)
        address = server.start()
        subscribers: list[Subscriber] = []
        try:
            writes = Writes()
            retry = RetryPolicy(attempts=attempts, on_retry=writes.on_retry, on_send=writes.on_send)
            async with TaskmemClient(address, retry=retry) as client, \
                    grpc.aio.insecure_channel(address) as channel:
                tasks = client.tasks if writer == "client" else TaskServiceStub(channel)
                task_id = (await client.tasks.CreateTask(pb.CreateTaskRequest(name="events bench"))).task.id
                for language, command in commands.items():
                    process = await asyncio.create_subprocess_exec(*command, address, task_id, "0",
                                                                   stdout=asyncio.subprocess.PIPE)
                    subscribers.append(Subscriber(language, process))
                await wait_until_subscribed(tasks, task_id, subscribers)
                if writer == "ghz":
                    await write_with_ghz(address, task_id, rate, warmup, Writes())
                else:
                    await write_at_rate(tasks, task_id, rate, warmup, Writes())
                measured_from_ns = time.time_ns()
                assert server.process is not None
                cpu_before = cpu_seconds(server.process.pid)
                writer_lags: list[float] = []
                sampler = asyncio.ensure_future(sample_loop_lag(writer_lags))
                if writer == "ghz":
                    sent, took = await write_with_ghz(address, task_id, rate, seconds, writes)
                else:
                    sent, took = await write_at_rate(tasks, task_id, rate, seconds, writes)
                sampler.cancel()
                server_cpu = cpu_seconds(server.process.pid) - cpu_before
                await post(tasks, task_id, "end")
                outputs = await asyncio.wait_for(
                    asyncio.gather(*(s.process.communicate() for s in subscribers)), 120)
        finally:
            for subscriber in subscribers:
                if subscriber.process.returncode is None:
                    subscriber.process.kill()
            server.stop()
    print(f"writer: {sent} messages in {took:.2f} s = {sent / took:.0f} events/s (target {rate:.0f}/s), "
          f"after {warmup:.0f} s warm-up; writer: {writer}; server: {'the ceiling' if ceiling else 'taskmem'};"
          f" {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"server CPU: {server_cpu / took:.2f} cores over the run, {server_cpu / sent * 1e6:.0f} µs per message"
          " (written, committed, sent to 3 subscribers)")
    accepted, calls = sorted(writes.accepted_ms), sorted(writes.call_ms)
    tried = "ghz's one attempt (it does not retry)" if writer == "ghz" else f"the client's {attempts} attempts"
    print(f"writes: {len(accepted)} of {sent} succeeded; CANCELLED {writes.failures['CANCELLED']};"
          f" failed after {tried}: {dict(writes.failures) or 'none'}")
    print(f"refused attempts, retried by the client: {writes.retries} {dict(writes.refusals) or ''}")
    if accepted:
        print(f"accepted attempt ms (the one that succeeded): p50 {percentile(accepted, 0.50):.1f}"
              f" p99 {percentile(accepted, 0.99):.1f} max {accepted[-1]:.1f};"
              f" whole call with retries: p50 {percentile(calls, 0.50):.1f} p99 {percentile(calls, 0.99):.1f}"
              f" max {calls[-1]:.1f}")
    lags = sorted(writer_lags) if writer != "ghz" else []  # ghz writes: this process's loop only waits
    if lags:
        print(f"writer's own loop lateness ms (in the latencies above, not the server's): p50 {percentile(lags, 0.5):.1f}"
              f" p99 {percentile(lags, 0.99):.1f} max {lags[-1]:.1f}")
    if writes.failures["CANCELLED"]:
        # grpc C-core's backlog protection: once more calls have arrived than the server's event loop has
        # taken (grpc.server.max_pending_requests, 1,000 by default), it cancels new ones by random early
        # detection. The server's admission (api/admission.py) should refuse before that point.
        print("CANCELLED: the server fell behind the offered rate and gRPC shed calls it had not yet started")
    print("latency ms: send = writer's send -> receipt; append = event appended (create_time) -> receipt")
    print("subscriber  received  events/s  send p50 send p99 send max  appd p50 appd p99 appd max")
    for subscriber, (stdout, _) in zip(subscribers, outputs, strict=True):
        print(report(subscriber.language, stdout.splitlines(), measured_from_ns, sent))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="messages the writer posts per second")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the measured run")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds written at the rate before measuring")
    parser.add_argument("--writer", choices=("client", "stub", "ghz"), default="ghz",
                        help="write through taskmem_client (request_id on every call), the bare stub or ghz")
    parser.add_argument("--attempts", type=int, default=RetryPolicy.attempts,
                        help="taskmem_client's attempts per call (its retries honour the server's retry hint)")
    served_by = parser.add_mutually_exclusive_group()
    served_by.add_argument("--server", metavar="CHECKOUT", help="run the server from another checkout's server/ "
                           "(e.g. `git worktree add /tmp/before main`), to compare before and after")
    served_by.add_argument("--ceiling", action="store_true", help="run bench/events_ceiling_server.py (a bare "
                           "grpc.aio server that stores nothing) in the server's place")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rate, arguments.seconds, arguments.warmup, arguments.writer, arguments.attempts,
                     arguments.server, arguments.ceiling))
