"""Retention under load: writes at a fixed rate with a TTL, a reader checking every second that no read
returns an expired item, and the database's size over time (issue 29, point 2).

Starts `taskmem serve` on a temporary database (SQLite, or PostgreSQL with --engine postgres: the tests'
embedded cluster) configured to keep memory entries --ttl seconds and to sweep every --sweep seconds.
A writer adds memory entries (TOOL_RESULT, a few words each) at --rate per second for --minutes, open
loop (each call at its scheduled time, --batch entries per call). Once a second a reader runs
QueryMemoryEntries (the newest 500), SearchMemories (FULLTEXT, 50 hits) and ListEvents (every event
since the last read) and counts every entry, or event still carrying an entry's content, whose expire_time
was at or before the moment the read was sent: the server must never return one. Every --report seconds
it prints the time, entries written, rows in memory_entries and events, the database's size (SQLite: file
+ WAL; PostgreSQL: pg_database_size), the latest search's hit count (of 50) and the violations so far.

    .venv/bin/python bench/retention_bench.py [--rate 200] [--minutes 10] [--ttl 60] [--sweep 5]
                                              [--batch 10] [--report 30] [--engine sqlite|postgres]
                                              [--events-ttl 0] [--cap 0]

--cap N sets the namespace's count cap (memory_entries_max: N; with --ttl 0, the cap alone): each write past
it expires the oldest entries in its own transaction. The closing line gives the write calls' latency
(p50, p95, p99), so runs with and without a cap compare the write's cost under the same load.

A bounded database shows as live rows levelling off near rate × (ttl + sweep) and the size levelling
off once SQLite reuses freed pages (the file does not shrink; it stops growing). Without --events-ttl the
events stay, an expired entry's stripped to a tombstone, so their rows grow with the writes; with it the
event log's own TTL deletes them too.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from taskmem.v1 import event_pb2, memory_pb2  # noqa: E402
from taskmem.v1 import memory_service_pb2 as mpb  # noqa: E402
from taskmem.v1 import task_service_pb2 as tpb  # noqa: E402
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support import server_process  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

WORDS = "deploy build cache vault token schema index shard queue worker retry backoff lease".split()


class Tally:
    def __init__(self) -> None:
        self.written = 0
        self.write_errors: Counter[str] = Counter()  # failed write calls by status code
        self.reads = 0
        self.violations = 0
        self.last_hits = 0  # hits of the latest search (expired ones dropped can leave fewer than its limit)
        self.examples: list[str] = []
        self.write_ms: list[float] = []  # each answered write call's latency

    def violation(self, what: str) -> None:
        self.violations += 1
        if len(self.examples) < 5:
            self.examples.append(what)


def now_us() -> int:
    return time.time_ns() // 1000


async def write(memory: MemoryServiceStub, task_id: str, rate: float, batch: int, seconds: float,
                tally: Tally) -> None:
    """Open loop: call n leaves at start + n × batch / rate, whether or not earlier calls have answered."""
    start, interval, calls = time.monotonic(), batch / rate, int(seconds * rate / batch)
    pending: set[asyncio.Task[None]] = set()

    async def one(n: int) -> None:
        entries = [mpb.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_TOOL_RESULT,
                                      summary=f"{WORDS[(n + k) % len(WORDS)]} step {n}.{k} finished",
                                      tags=[WORDS[n % len(WORDS)]]) for k in range(batch)]
        try:
            sent = time.perf_counter()
            await memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=entries), timeout=30)
            tally.write_ms.append((time.perf_counter() - sent) * 1000)
            tally.written += batch
        except grpc.aio.AioRpcError as error:
            tally.write_errors[error.code().name] += 1

    for n in range(calls):
        await asyncio.sleep(max(0.0, start + n * interval - time.monotonic()))
        call = asyncio.create_task(one(n))
        pending.add(call)
        call.add_done_callback(pending.discard)
    await asyncio.gather(*pending)


async def read(tasks: TaskServiceStub, memory: MemoryServiceStub, task_id: str, stop: asyncio.Event,
               tally: Tally) -> None:
    """Every second, three reads; anything returned that had expired when the read was sent is a violation."""
    after = 0
    while not stop.is_set():
        sent = now_us()
        listed = await memory.QueryMemoryEntries(mpb.QueryMemoryEntriesRequest(
            filter=memory_pb2.MemoryFilter(task_id=task_id), page_size=500))
        found = await memory.SearchMemories(mpb.SearchMemoriesRequest(
            query=" ".join(WORDS[:4]), mode=memory_pb2.SEARCH_MODE_FULLTEXT,
            filter=memory_pb2.MemoryFilter(task_id=task_id), limit=50))
        events = []
        while True:  # every event since the last read
            page = (await tasks.ListEvents(tpb.ListEventsRequest(
                task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED], after_cursor=after,
                page_size=500))).events
            events += page
            after = page[-1].cursor if page else after
            if len(page) < 500:
                break
        tally.reads += 3
        tally.last_hits = len(found.hits)
        for entry in [*listed.entries, *(hit.entry for hit in found.hits)]:
            if entry.HasField("expire_time") and entry.expire_time.ToMicroseconds() <= sent:
                tally.violation(f"entry {entry.id} expired {sent - entry.expire_time.ToMicroseconds()} µs before")
        for event in events:
            expire = event.payload.fields.get("expire_time")
            if "summary" in event.payload and expire is not None and _rfc3339_us(expire.string_value) <= sent:
                tally.violation(f"event {event.cursor} still carries expired entry {event.payload['id']}")
        try:
            await asyncio.wait_for(stop.wait(), max(0.0, 1.0 - (now_us() - sent) / 1e6))
        except TimeoutError:
            pass


def _rfc3339_us(text: str) -> int:
    from google.protobuf import timestamp_pb2

    stamp = timestamp_pb2.Timestamp()
    stamp.FromJsonString(text)
    return stamp.ToMicroseconds()


def size_and_rows(server: ServerProcess) -> tuple[int, int, int]:
    """(database bytes, memory_entries rows, events rows)."""
    if server_process.ENGINE == "postgres":
        size = int(server.sql("SELECT pg_database_size(current_database())")[0][0])  # type: ignore[arg-type]
    else:
        size = sum(os.path.getsize(p) for p in (server.database, Path(f"{server.database}-wal")) if p.exists())
    entries = int(server.sql("SELECT count(*) FROM memory_entries")[0][0])  # type: ignore[arg-type]
    events = int(server.sql("SELECT count(*) FROM events")[0][0])  # type: ignore[arg-type]
    return size, entries, events


async def report(server: ServerProcess, every: float, stop: asyncio.Event, tally: Tally, start: float) -> None:
    print(f"{'t (s)':>6} {'written':>8} {'live rows':>9} {'events':>8} {'db MB':>7} {'reads':>6} {'hits':>5}"
          f" {'violations':>10}", flush=True)
    while True:
        size, entries, events = await asyncio.to_thread(size_and_rows, server)
        print(f"{time.monotonic() - start:6.0f} {tally.written:8d} {entries:9d} {events:8d} {size / 2**20:7.1f}"
              f" {tally.reads:6d} {tally.last_hits:5d} {tally.violations:10d}", flush=True)
        if stop.is_set():
            return
        try:
            await asyncio.wait_for(stop.wait(), every)
        except TimeoutError:
            pass


async def main(args: argparse.Namespace) -> int:
    server_process.ENGINE = args.engine
    folder = Path(tempfile.mkdtemp(prefix="taskmem-retention-"))
    server = ServerProcess(folder / "taskmem.db", env={
        "TASKMEM_RETENTION": f"{{'*': {{memory_entries: {args.ttl}"
                             + (f", events: {args.events_ttl}" if args.events_ttl else "")
                             + (f", memory_entries_max: {args.cap}" if args.cap else "") + "}}",
        "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": str(args.sweep), "TASKMEM_EMBEDDING_BACKEND": "none"})
    server.start()
    tally, stop = Tally(), asyncio.Event()
    print(f"retention bench: {args.rate}/s for {args.minutes} min, ttl {args.ttl or 'none'} s, cap"
          f" {args.cap or 'none'}, events ttl {args.events_ttl or 'none'}, sweep every {args.sweep} s, {args.batch} entries per call, {args.engine}",
          flush=True)
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="retention bench"))).task.id
            start = time.monotonic()
            reporter = asyncio.create_task(report(server, args.report, stop, tally, start))
            reader = asyncio.create_task(read(tasks, memory, task_id, stop, tally))
            await write(memory, task_id, args.rate, args.batch, args.minutes * 60, tally)
            stop.set()
            await asyncio.gather(reader, reporter)
    finally:
        server.stop()
    failed = ", ".join(f"{n} {code}" for code, n in tally.write_errors.most_common()) or "none"
    print(f"written {tally.written} entries (failed calls: {failed}); {tally.reads} reads;"
          f" {tally.violations} returned an expired entry", flush=True)
    if tally.write_ms:
        ms = statistics.quantiles(tally.write_ms, n=100)
        print(f"write calls: p50 {ms[49]:.1f} ms, p95 {ms[94]:.1f} ms, p99 {ms[98]:.1f} ms", flush=True)
    for example in tally.examples:
        print("  " + example)
    return 1 if tally.violations else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200.0, help="entries written per second")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--ttl", type=float, default=60.0, help="memory entries' TTL, seconds (0: none)")
    parser.add_argument("--events-ttl", type=float, default=0.0,
                        help="the event log's own TTL, seconds (0: events stay, expired ones as tombstones)")
    parser.add_argument("--cap", type=int, default=0,
                        help="memory entries a namespace keeps live (memory_entries_max; 0: no cap)")
    parser.add_argument("--sweep", type=float, default=5.0, help="maintenance interval, seconds")
    parser.add_argument("--batch", type=int, default=10, help="entries per AddMemoryEntries call")
    parser.add_argument("--report", type=float, default=30.0, help="seconds between size reports")
    parser.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite")
    sys.exit(asyncio.run(main(parser.parse_args())))
