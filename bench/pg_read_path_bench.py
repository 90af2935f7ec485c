"""PostgreSQL read path: sync psycopg in reader threads (what the engine runs) beside psycopg's async pool.

The engine runs the store's plain functions of a Reader in threads, on a psycopg_pool ConnectionPool
(store/postgres/storage.py). The issue named psycopg 3 async with psycopg_pool's AsyncConnectionPool;
this measures what that would change, on the same database, in interleaved rounds:
1. one statement (the cache-freshness read, `SELECT last, silent_commits FROM event_cursor`): through
   PostgresStorage.read (a thread hop, a pooled sync connection) and through an AsyncConnectionPool of
   the same size awaited on the event loop;
2. the engine's cache check before a cached view is served (PostgresStorage.views_current: that
   statement on its own async connection, shared by concurrent callers, and the tail's position);
3. GetTask's read (load_task_with_plan: the task, its plan and 50 items, three statements) through
   PostgresStorage.read, beside the same three statements awaited one by one on the async pool.
Each at concurrency 1 (latency p50/p99) and --concurrency (calls/s), with the CPU time this process
spent per call (all threads): the replica's own core is what limits it, so CPU per call is the figure
that says whether moving over would pay.

    .venv/bin/python bench/pg_read_path_bench.py [--calls 2000] [--concurrency 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

import psycopg_pool  # noqa: E402

from taskmem.api.event_encoding import event_payload  # noqa: E402
from taskmem.core.ids import now_us  # noqa: E402
from taskmem.core.plans import Plan, PlanItem  # noqa: E402
from taskmem.core.tasks import Task, TaskStatus  # noqa: E402
from taskmem.store.tasks import tasks as task_store  # noqa: E402
from taskmem.store.postgres.connection import configure  # noqa: E402
from taskmem.store.postgres.sql import to_postgres  # noqa: E402
from taskmem.store.postgres.storage import PostgresStorage  # noqa: E402
from taskmem.store.postgres.view_freshness import cache_marks  # noqa: E402
from taskmem.store.engines import open_storage  # noqa: E402
from taskmem.store.access import Transaction  # noqa: E402

Call = Callable[[], Awaitable[object]]
MARKS_SQL = "SELECT last, silent_commits FROM event_cursor WHERE id = 1"


TASK_SQL = to_postgres("SELECT * FROM tasks WHERE namespace = ? AND id = ?")
PLAN_SQL = to_postgres("SELECT * FROM plans WHERE namespace = ? AND task_id = ? AND version = ?")
ITEMS_SQL = to_postgres("SELECT * FROM plan_items WHERE namespace = ? AND task_id = ? AND plan_version = ?"
                        " ORDER BY ordinal")


async def measure(call: Call, calls: int, concurrency: int) -> tuple[float, float, float, float]:
    """(p50 ms, p99 ms, calls/s, CPU µs per call)."""
    latencies: list[float] = []
    slots = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with slots:
            began = time.perf_counter()
            await call()
            latencies.append(time.perf_counter() - began)

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    latencies.sort()
    return (statistics.median(latencies) * 1000, latencies[int(len(latencies) * 0.99) - 1] * 1000, calls / wall,
            cpu / calls * 1_000_000)


async def main(args: argparse.Namespace) -> None:
    from tests.support.postgres import database_url

    url = database_url(tempfile.mkdtemp(prefix="taskmem-read-path-"))
    storage = await open_storage(url, event_payload)
    assert isinstance(storage, PostgresStorage)

    def create(tx: Transaction) -> None:
        items = [PlanItem(id=f"step-{n}", ordinal=n, title=f"step {n} of the plan", stage="1") for n in range(50)]
        task_store.create_task(tx, Task("default", "tsk_bench", "bench", TaskStatus.EXECUTING, now_us(), now_us()),
                               items)
    await storage.write(create, "default", "bench")
    async_pool = psycopg_pool.AsyncConnectionPool(url, min_size=4, max_size=4, open=False,
                                                  kwargs={"autocommit": True}, configure=_configure_async)
    await async_pool.open(wait=True)

    async def marks_async() -> object:
        async with async_pool.connection() as connection:
            return await (await connection.execute(MARKS_SQL)).fetchone()

    async def plan_async() -> object:
        """load_task_with_plan's statements and row decoding, awaited on the async pool."""
        async with async_pool.connection() as connection:
            async with connection.transaction():  # one snapshot, as the engine's REPEATABLE READ reads
                task = task_store.task_from_row(await (await connection.execute(TASK_SQL, ("default", "tsk_bench"))).fetchone())
                key = ("default", "tsk_bench", task.plan_version)
                header = await (await connection.execute(PLAN_SQL, key)).fetchone()
                rows = await (await connection.execute(ITEMS_SQL, key)).fetchall()
                return task, Plan("tsk_bench", task.plan_version, [task_store.item_from_row(r) for r in rows],
                                  header["created_at"], header["reason"])

    cases: list[tuple[str, Call]] = [
        ("cache check (views_current)   ", storage.views_current),
        ("one statement, sync in threads", lambda: storage.read(cache_marks)),
        ("one statement, async pool     ", marks_async),
        ("GetTask read,  sync in threads", lambda: storage.read(task_store.load_task_with_plan, "default", "tsk_bench", 0)),
        ("GetTask read,  async pool     ", plan_async),
    ]
    results: dict[tuple[str, int], list[tuple[float, float, float, float]]] = {}
    for _ in range(args.rounds):
        for label, call in cases:
            for _ in range(20):
                await call()  # warm
            for concurrency in (1, args.concurrency):
                results.setdefault((label, concurrency), []).append(await measure(call, args.calls, concurrency))
    for (label, concurrency), runs in results.items():
        p50, p99, rate, cpu = (statistics.median(r[i] for r in runs) for i in range(4))
        print(f"{label} concurrency {concurrency:>3}: p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  {rate:7.0f} calls/s"
              f"  CPU {cpu:5.0f} µs/call (this process)")
    await async_pool.close()
    await storage.close()


async def _configure_async(connection: object) -> None:
    configure(connection)  # type: ignore[arg-type]  # the same adapters and row factory as the sync pool's


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    asyncio.run(main(parser.parse_args()))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
