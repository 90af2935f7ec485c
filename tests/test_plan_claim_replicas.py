"""Claims of plan items across three `taskmem serve` replicas on one PostgreSQL database (whatever --engine
says: replicas need it): of any number of concurrent claimers on any replicas exactly one gets an item, and a
lease that lapses on one replica frees the item for a claimer on another."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import event_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase
from tests.support.eventually import eventually

CLAIMERS_PER_REPLICA = 20


@pytest.fixture
def replicas(tmp_path: Path):  # type: ignore[no-untyped-def]
    url = database_url(str(tmp_path / "claims"))
    started = [ServerOnDatabase(url) for _ in range(3)]
    for replica in started:
        replica.start()
    yield started
    for replica in started:
        print(f"--- replica {replica.address}:\n" + "".join(replica.output[-40:]))  # shown when the test fails
        if replica.process is not None and replica.process.poll() is None:
            replica.stop()


def layered_plan(items: int, width: int) -> list[task_pb2.PlanItemSpec]:
    """A DAG of `width`-wide layers, each item depending on two of the layer before."""
    plan = []
    for n in range(items):
        layer_start = n - n % width
        before = [f"i{layer_start - width + k}" for k in (n % width, (n + 1) % width)] if layer_start else []
        plan.append(task_pb2.PlanItemSpec(id=f"i{n}", title=f"item {n}", depends_on=sorted(set(before))))
    return plan


async def drain(tasks: TaskServiceStub, task_id: str, holder: str, done: list[tuple[str, str]]) -> None:
    """Claim, complete as the holder, repeat until nothing is left; records (item, holder) of each completion."""
    while True:
        answer = await tasks.ClaimPlanItem(pb.ClaimPlanItemRequest(task_id=task_id, holder_id=holder))
        if not answer.HasField("item"):
            if answer.remaining_count == 0:
                return
            await asyncio.sleep(0.02)
            continue
        await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id=answer.item.id, holder_id=holder,
                                                            status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
        done.append((answer.item.id, holder))


async def test_sixty_concurrent_claimers_on_three_replicas_get_each_item_exactly_once(
        replicas: list[ServerOnDatabase]) -> None:
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    stubs = [TaskServiceStub(ch) for ch in channels]
    try:
        # A burst: 60 claims at once for 30 ready items.
        burst = (await stubs[0].CreateTask(pb.CreateTaskRequest(name="burst", plan=[
            task_pb2.PlanItemSpec(id=f"b{n}", title=f"b{n}") for n in range(30)]))).task.id
        answers = await asyncio.gather(*(
            stubs[n % 3].ClaimPlanItem(pb.ClaimPlanItemRequest(task_id=burst, holder_id=f"h{n}"))
            for n in range(3 * CLAIMERS_PER_REPLICA)))
        handed = Counter(a.item.id for a in answers if a.HasField("item"))
        assert len(handed) == 30 and set(handed.values()) == {1}

        # A DAG drained by 20 claimers per replica: every item done once, by the holder that claimed it.
        task_id = (await stubs[1].CreateTask(pb.CreateTaskRequest(name="dag", plan=layered_plan(120, 12)))).task.id
        done: list[tuple[str, str]] = []
        await asyncio.wait_for(asyncio.gather(*(
            drain(stubs[n % 3], task_id, f"agent-{n}", done) for n in range(3 * CLAIMERS_PER_REPLICA))), 120)
        counts = Counter(item for item, _ in done)
        assert len(counts) == 120 and set(counts.values()) == {1}
        claimed = (await stubs[2].ListEvents(pb.ListEventsRequest(
            task_ids=[task_id], types=[event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIMED], page_size=500))).events
        assert sorted((e.payload["id"], e.payload["holder_id"]) for e in claimed) == sorted(done)
        plan = (await stubs[0].GetPlan(pb.GetPlanRequest(task_id=task_id))).plan
        assert {i.status for i in plan.items} == {task_pb2.PLAN_ITEM_STATUS_COMPLETED}
    finally:
        for channel in channels:
            await channel.close()


async def test_a_lease_lapsed_on_one_replica_frees_the_item_for_a_claimer_on_another(
        replicas: list[ServerOnDatabase]) -> None:
    a, _, c = replicas
    async with grpc.aio.insecure_channel(a.address) as on_a, grpc.aio.insecure_channel(c.address) as on_c:
        task_id = (await TaskServiceStub(on_a).CreateTask(pb.CreateTaskRequest(name="lapse", plan=[
            task_pb2.PlanItemSpec(id="only", title="only")]))).task.id
        await TaskServiceStub(on_a).ClaimPlanItem(pb.ClaimPlanItemRequest(
            task_id=task_id, holder_id="crashed", lease=duration_pb2.Duration(seconds=1)))
        assert not (await TaskServiceStub(on_c).ClaimPlanItem(pb.ClaimPlanItemRequest(
            task_id=task_id, holder_id="rescuer"))).HasField("item")
        async def expiries() -> list[event_pb2.Event]:  # the lease, then the sweeper's pass on either replica
            return list((await TaskServiceStub(on_c).ListEvents(pb.ListEventsRequest(
                task_ids=[task_id], types=[event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED]))).events)
        expired = await eventually(expiries, "the claim's expiry", interval=0.1)
        assert [e.payload["claim"]["holder_id"] for e in expired] == ["crashed"]
        rescued = await TaskServiceStub(on_c).ClaimPlanItem(pb.ClaimPlanItemRequest(task_id=task_id,
                                                                                     holder_id="rescuer"))
        assert rescued.item.id == "only" and rescued.item.holder_id == "rescuer"
