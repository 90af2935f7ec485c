"""What plan-progress inference costs PostMessage, side by side in one run.

Starts `taskmem serve` (temporary database) with two tasks holding the same 50-item plan, one
with inference on and one opted out (plan_inference_disabled), and drives PostMessage with the
same grpc.aio client and concurrency: a progress message that names a finished step ("Step 1
done — pushed to ghcr.io": the matcher runs over the plan each time) and one that cannot finish
anything ("Working on step 4 now": no plan is read). Prints messages/s and each ratio to the
opted-out task, as medians over interleaved rounds (the 2 cores are shared).

    .venv/bin/python bench/plan_inference_bench.py [--seconds 2] [--rounds 3] [--concurrency 64] [--items 50]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.task_service_bench import drive  # noqa: E402
from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

FINISHING = "Step 1 done — pushed to ghcr.io"
MENTIONING = "Working on step 4 now"


async def main(seconds: float, rounds: int, concurrency: int, items: int) -> None:
    figures: dict[str, list[float]] = {"off": [], "finishing": [], "mentioning": []}
    with tempfile.TemporaryDirectory() as tmp:
        taskmem = ServerProcess(Path(tmp) / "bench.db", "--log-level", "WARNING")
        address = taskmem.start()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                tasks = TaskServiceStub(channel)
                plan = [task_pb2.PlanItemSpec(id=f"item-{i}", title=f"Build and push widget {i} to the registry")
                        for i in range(items)]
                on, off = [(await tasks.CreateTask(pb.CreateTaskRequest(
                    name="bench", plan=plan, plan_inference_disabled=disabled))).task.id for disabled in (False, True)]
                agent, progress = task_pb2.MESSAGE_ROLE_AGENT, task_pb2.MESSAGE_KIND_PROGRESS
                calls = {
                    "off": pb.PostMessageRequest(task_id=off, role=agent, kind=progress, content=FINISHING),
                    "finishing": pb.PostMessageRequest(task_id=on, role=agent, kind=progress, content=FINISHING),
                    "mentioning": pb.PostMessageRequest(task_id=on, role=agent, kind=progress, content=MENTIONING),
                }
                first = await tasks.PostMessage(calls["finishing"])
                assert [i.id for i in first.inferred_items] == ["item-0"], first
                for request in calls.values():
                    await drive([lambda: tasks.PostMessage(request)], 1.0, concurrency)
                for _ in range(rounds):
                    for name, request in calls.items():
                        figures[name].append(await drive([lambda: tasks.PostMessage(request)], seconds, concurrency))
        finally:
            taskmem.stop()
    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"PostMessage, {items}-item plan, concurrency {concurrency}, {rounds} rounds of {seconds:g} s; medians")
    print(f"opted out ({FINISHING!r})      {median['off']:7.0f} msg/s")
    for name, text in (("finishing", FINISHING), ("mentioning", MENTIONING)):
        print(f"inference on ({text!r}) {median[name]:7.0f} msg/s  {median[name] / median['off']:.2f}x opted out"
              f"  (rounds {min(figures[name]):.0f}–{max(figures[name]):.0f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="length of each measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--items", type=int, default=50, help="plan items of each task")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.seconds, arguments.rounds, arguments.concurrency, arguments.items))
