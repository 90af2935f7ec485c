"""The writer alone: CPU per RecordAction mutation in group commits of a given size, without gRPC.

Opens the SQLite storage in this process (temporary file, synchronous=FULL as the server runs it),
creates a task with a 50-item plan, then submits rounds of `batch` concurrent RecordAction mutations
(the same mutation TaskService.RecordAction hands the writer: the action row, the task's touch, its
event and the converted reply) and waits for each round to commit. It prints, per batch size, the
writer thread's CPU µs per mutation and the whole process's (which adds the event loop's side:
futures, the hop to the thread, the publish), both read from /proc, so they hold when the shared
cores' load stretches wall time; and the wall time per round, which the commit's fsync dominates.

    .venv/bin/python bench/write_batch_bench.py [--batches 1,8,64] [--mutations 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from taskmem.api import task_convert
from taskmem.api.event_encoding import event_payload
from taskmem.core.actions import Action, ActionStatus, ActionType
from taskmem.core.ids import new_id
from taskmem.core.plans import PlanItem
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.tasks import actions as action_store
from taskmem.store.tasks import tasks as task_store
from taskmem.store.sqlite.storage import SqliteStorage
from taskmem.store.access import Transaction
from taskmem.v1 import task_service_pb2 as pb

NAMESPACE = "default"


def cpu_seconds(stat: Path) -> float:
    """User + system CPU time from a /proc stat file (a process's or one thread's)."""
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def record_mutation(task_id: str) -> object:
    """What TaskService.RecordAction submits for a 1 KB SUCCEEDED action without a plan item."""
    fields = dict(plan_item_id="", type=ActionType.OTHER, tool_name="", summary="bench action",
                  input={"command": "x" * 1000}, output={}, error="", duration_us=None, tokens_in=0, tokens_out=0)

    def record(tx: Transaction) -> pb.RecordActionResponse:
        action = Action(namespace=tx.namespace, id=new_id("act"), task_id=task_id, status=ActionStatus.SUCCEEDED,
                        created_at=tx.now, completed_at=tx.now, **fields)  # type: ignore[arg-type]
        return pb.RecordActionResponse(action=task_convert.action(action_store.record_action(tx, action)))

    return record


async def main(batches: list[int], mutations: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        storage = await SqliteStorage.open_file(str(Path(tmp) / "bench.db"), event_payload)
        try:
            writer_tid = await storage._writer_thread.run(lambda connection: threading.get_native_id())
            writer_stat = Path(f"/proc/self/task/{writer_tid}/stat")
            process_stat = Path("/proc/self/stat")
            items = [PlanItem(id=f"step-{i}", ordinal=i, title=f"Step {i}", depends_on=[f"step-{i - 1}"] if i else [])
                     for i in range(50)]
            task = Task(namespace=NAMESPACE, id=new_id("task"), name="bench", status=TaskStatus.PENDING, created_at=0, updated_at=0)

            def create(tx: Transaction) -> None:
                task.created_at = task.updated_at = tx.now
                task_store.create_task(tx, task, items)

            await storage.write(create, NAMESPACE, "bench")
            record = record_mutation(task.id)
            print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print("batch  writer thread CPU µs/mutation  process CPU µs/mutation  wall ms/round (median)")
            for batch in batches:
                for _ in range(3):  # warm-up
                    await asyncio.gather(*(storage.write(record, NAMESPACE, "bench") for _ in range(batch)))
                rounds = max(1, mutations // batch)
                walls = []
                writer_before, process_before = cpu_seconds(writer_stat), cpu_seconds(process_stat)
                for _ in range(rounds):
                    started = time.perf_counter()
                    await asyncio.gather(*(storage.write(record, NAMESPACE, "bench") for _ in range(batch)))
                    walls.append(time.perf_counter() - started)
                done = batch * rounds
                writer_us = (cpu_seconds(writer_stat) - writer_before) / done * 1e6
                process_us = (cpu_seconds(process_stat) - process_before) / done * 1e6
                print(f"{batch:5d}  {writer_us:29.0f}  {process_us:23.0f}  {statistics.median(walls) * 1e3:21.2f}")
            print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        finally:
            await storage.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", default="1,8,64", help="comma-separated group-commit sizes")
    parser.add_argument("--mutations", type=int, default=2000,
                        help="mutations per batch size (in rounds of one commit each)")
    arguments = parser.parse_args()
    asyncio.run(main([int(b) for b in arguments.batches.split(",")], arguments.mutations))
