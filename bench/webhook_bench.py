"""Webhook delivery at a steady 200 events/s, and what metrics cost on the write path, in one run.

1. Webhooks: starts `taskmem serve` (temporary database, webhook_allowed_hosts 127.0.0.1:PORT) and a
   loopback receiver that verifies every signature (standardwebhooks). Creates --tasks tasks whose
   webhooks carry ACTION_RECORDED, then records actions round-robin over them at --rate per second
   for --seconds. Prints delivered events/s, how long the backlog took to drain after the last
   write, and the commit → receipt delay (p50, p95, max): the event's create_time (stamped in its
   transaction) to the receiver's clock when the POST arrived, and the server's CPU time per event
   (written and delivered; from /proc, so it holds when a loaded machine slows the clock figures),
   beside the same writes to tasks with no callback_url.
2. Metrics cost: two servers, one with --metrics-listen and one without, each driven with
   RecordAction by the same grpc.aio client (--concurrency calls in flight) in alternating rounds;
   prints the median requests/s of each and their ratio, and each server's CPU time per request.

    .venv/bin/python bench/webhook_bench.py [--rate 200] [--seconds 10] [--tasks 4] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from taskmem.v1 import event_pb2, task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.ports import unused_port  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402


# The receiver runs in a process of its own, so it does not share a core's GIL with the client
# that drives the writes: it verifies each signature and prints "<webhook-id> <arrival time>".
RECEIVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.webhook_receiver import WebhookReceiver
class Timed(WebhookReceiver):
    def record(self, headers, raw):
        now = time.time()
        super().record(headers, raw)
        with self._lock:  # one write per line: threads must not interleave
            sys.stdout.write(f"{headers.get('webhook-id', '-')} {now} {len(self.rejected)}\\n")
            sys.stdout.flush()
receiver = Timed(keep_alive=True)
receiver.port = int(sys.argv[2])
receiver.secret = sys.stdin.readline().strip()
receiver.start()
print(receiver.url, flush=True)
sys.stdin.readline()
"""


class ReceiverProcess:
    def __init__(self, secret: str, port: int) -> None:
        self.process = subprocess.Popen([sys.executable, "-c", RECEIVER, str(ROOT), str(port)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(secret + "\n")
        self.process.stdin.flush()
        self.url = self.process.stdout.readline().strip()
        self.arrived: dict[str, float] = {}
        self.posts = 0
        self.rejected = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            message_id, at, rejected = line.split()
            self.posts += 1
            self.rejected = int(rejected)
            self.arrived.setdefault(message_id, float(at))

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


async def webhook_delivery(rate: float, seconds: float, task_count: int, hooked: bool = True) -> float:
    """Writes --rate events/s for --seconds; with hooked, waits for their delivery and prints the figures.
    Returns the server's CPU seconds per event over the run."""
    receiver: ReceiverProcess | None = None
    with tempfile.TemporaryDirectory() as tmp:
        port = unused_port()  # the receiver's, listed before the server starts
        server = ServerProcess(Path(tmp) / "bench.db", "--log-level", "WARNING",
                               env={"TASKMEM_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{port}"})
        address = server.start()
        assert server.process is not None
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = TaskServiceStub(channel)
                receiver = ReceiverProcess((await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret, port)
                task_ids = [(await stub.CreateTask(pb.CreateTaskRequest(
                    name=f"bench {n}", callback_url=receiver.url if hooked else "",
                    webhook_event_types=[event_pb2.EVENT_TYPE_ACTION_RECORDED]))).task.id for n in range(task_count)]
                total = int(rate * seconds)
                calls: list[asyncio.Future[object]] = []
                cpu_before = cpu_seconds(server.process.pid)
                started = time.perf_counter()
                for n in range(total):  # paced: the n-th write starts at n / rate seconds
                    await asyncio.sleep(max(0.0, started + n / rate - time.perf_counter()))
                    calls.append(asyncio.ensure_future(stub.RecordAction(pb.RecordActionRequest(
                        task_id=task_ids[n % task_count], summary=f"step {n}",
                        status=task_pb2.ACTION_STATUS_SUCCEEDED))))
                await asyncio.gather(*calls)
                written = time.perf_counter() - started
                last_write = time.time()
                if not hooked:
                    cpu_per_event = (cpu_seconds(server.process.pid) - cpu_before) / total
                    print(f"no webhooks: {total} events written in {written:.1f} s ({total / written:.0f}/s);"
                          f" server CPU {cpu_per_event * 1000:.2f} ms per event")
                    return cpu_per_event
                cursors: dict[str, float] = {}
                token = ""
                while True:
                    page = await stub.ListEvents(pb.ListEventsRequest(
                        types=[event_pb2.EVENT_TYPE_ACTION_RECORDED], page_size=500, page_token=token))
                    cursors.update({str(e.cursor): e.create_time.ToMicroseconds() / 1e6 for e in page.events})
                    token = page.next_page_token
                    if not token:
                        break
                deadline = time.monotonic() + 120
                while len(set(cursors) & set(receiver.arrived)) < len(cursors) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                cpu_per_event = (cpu_seconds(server.process.pid) - cpu_before) / total
        finally:
            server.stop()
            if receiver is not None:
                receiver.stop()
    assert receiver is not None
    delivered = [receiver.arrived[c] for c in cursors if c in receiver.arrived]
    delays_ms = [(receiver.arrived[c] - t) * 1000 for c, t in cursors.items() if c in receiver.arrived]
    span = max(delivered) - min(delivered) if delivered else 0.0
    print(f"webhooks: {len(cursors)} events written in {written:.1f} s ({len(cursors) / written:.0f}/s) over "
          f"{task_count} task(s); {len(delivered)} delivered ({receiver.posts} POSTs received, "
          f"{receiver.rejected} bad signatures); server CPU {cpu_per_event * 1000:.2f} ms per event")
    if delivered:
        print(f"  delivered {len(delivered) / span:.0f} events/s; backlog drained "
              f"{max(0.0, max(delivered) - last_write):.2f} s after the last write")
        print(f"  commit -> receipt: p50 {percentile(delays_ms, 0.5):.1f} ms, p95 {percentile(delays_ms, 0.95):.1f} ms,"
              f" max {max(delays_ms):.1f} ms")
    return cpu_per_event


async def drive(call: Callable[[], Awaitable[object]], seconds: float, concurrency: int) -> tuple[float, int]:
    """Calls in flight for `seconds`: (requests per second, requests made)."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / (time.perf_counter() - start), done


async def metrics_cost(seconds: float, rounds: int, concurrency: int) -> None:
    figures: dict[str, list[float]] = {"without": [], "with": []}
    cpu = {"without": 0.0, "with": 0.0}  # server CPU seconds over the rounds
    calls = {"without": 0, "with": 0}
    with tempfile.TemporaryDirectory() as tmp:
        plain = ServerProcess(Path(tmp) / "plain.db", "--log-level", "WARNING")
        measured = ServerProcess(Path(tmp) / "measured.db", "--log-level", "WARNING",
                                 "--metrics-listen", "127.0.0.1:0")
        processes = {"without": plain, "with": measured}
        servers = {"without": plain.start(), "with": measured.start()}
        try:
            for round_number in range(rounds):
                order = ["without", "with"] if round_number % 2 == 0 else ["with", "without"]
                for name in order:
                    async with grpc.aio.insecure_channel(servers[name]) as channel:
                        stub = TaskServiceStub(channel)
                        task_id = (await stub.CreateTask(pb.CreateTaskRequest(name="bench"))).task.id
                        request = pb.RecordActionRequest(task_id=task_id, summary="ran the tests",
                                                         status=task_pb2.ACTION_STATUS_SUCCEEDED)
                        pid = processes[name].process.pid  # type: ignore[union-attr]
                        before = cpu_seconds(pid)
                        rate, made = await drive(lambda: stub.RecordAction(request), seconds, concurrency)
                        cpu[name] += cpu_seconds(pid) - before
                        calls[name] += made
                        figures[name].append(rate)
        finally:
            plain.stop()
            measured.stop()
    without, with_metrics = statistics.median(figures["without"]), statistics.median(figures["with"])
    print(f"RecordAction, {concurrency} in flight, median of {rounds} rounds of {seconds:.0f} s:")
    print(f"  without metrics {without:.0f} req/s, with metrics {with_metrics:.0f} req/s"
          f" (ratio {with_metrics / without:.3f})")
    print(f"  rounds without: {', '.join(f'{v:.0f}' for v in figures['without'])};"
          f" with: {', '.join(f'{v:.0f}' for v in figures['with'])}")
    # CPU per request holds on a loaded machine, where requests/s follow the neighbours' load.
    per_call = {name: cpu[name] / max(1, calls[name]) * 1000 for name in cpu}
    print(f"  server CPU per request: without {per_call['without']:.3f} ms, with {per_call['with']:.3f} ms"
          f" ({(per_call['with'] / per_call['without'] - 1) * 100:+.1f} %)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200.0, help="events per second written (default 200)")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of writing (default 10)")
    parser.add_argument("--tasks", type=int, default=4, help="hooked tasks the events spread over (default 4)")
    parser.add_argument("--rounds", type=int, default=5, help="metrics-cost rounds (default 5)")
    parser.add_argument("--round-seconds", type=float, default=2.0, help="seconds per metrics-cost round")
    parser.add_argument("--concurrency", type=int, default=64, help="RecordAction calls in flight (default 64)")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    plain = asyncio.run(webhook_delivery(args.rate, args.seconds, args.tasks, hooked=False))
    hooked = asyncio.run(webhook_delivery(args.rate, args.seconds, args.tasks))
    print(f"  webhooks cost {(hooked - plain) * 1000:.2f} ms of server CPU per delivered event: at {args.rate:.0f}"
          f" events/s, {(hooked - plain) * args.rate:.2f} of a core for delivery, {hooked * args.rate:.2f} in all")
    asyncio.run(metrics_cost(args.round_seconds, args.rounds, args.concurrency))
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
