"""Claims of plan items end to end (issue 28): ClaimPlanItem, RenewClaim, ReleaseClaim, expiry, the holder
check of UpdatePlanItem, holders in every view, and claims across a restart, against a real server."""

from __future__ import annotations

import asyncio

import grpc
import pytest
import yaml
from google.protobuf import duration_pb2

from taskmem.v1 import event_pb2, state_service_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.eventually import eventually
from tests.support.rpc_errors import assert_rpc_error, error_info
from tests.support.server_process import ServerProcess

IN_PROGRESS, PENDING = task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS, task_pb2.PLAN_ITEM_STATUS_PENDING
NOT_HELD = "ERROR_REASON_CLAIM_NOT_HELD"


def spec(item_id: str, *depends_on: str, stage: str = "", tool: str = "") -> task_pb2.PlanItemSpec:
    return task_pb2.PlanItemSpec(id=item_id, title=f"do {item_id}", depends_on=depends_on, stage=stage,
                                 tool_name=tool)


async def plan(tasks: TaskServiceStub, *items: task_pb2.PlanItemSpec) -> str:
    return (await tasks.CreateTask(pb.CreateTaskRequest(name="many agents", plan=items))).task.id


def seconds(value: float) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=int(value), nanos=round(value % 1 * 1e9))


async def claim(tasks: TaskServiceStub, task_id: str, holder: str, lease: float = 30, **fields: object) -> pb.ClaimPlanItemResponse:
    return await tasks.ClaimPlanItem(pb.ClaimPlanItemRequest(task_id=task_id, holder_id=holder, lease=seconds(lease),
                                                             **fields))  # type: ignore[arg-type]


async def refused(call: object, code: grpc.StatusCode, reason: str) -> dict[str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    assert_rpc_error(raised.value, code, reason)
    return dict(error_info(raised.value).metadata)


async def events_of(tasks: TaskServiceStub, task_id: str, kind: int) -> list[event_pb2.Event]:
    listed = await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], types=[kind], page_size=500))
    return list(listed.events)


# --- handing out items ------------------------------------------------------------------------

async def test_a_claim_hands_out_the_first_ready_item_in_progress_under_the_holders_lease(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("build"), spec("push", "build"), spec("docs"))
    first = await claim(tasks, task_id, "agent-1")
    assert (first.item.id, first.item.status, first.item.holder_id) == ("build", IN_PROGRESS, "agent-1")
    assert first.claim.holder_id == "agent-1" and first.claim.item_id == "build"
    lease = first.claim.expire_time.ToMicroseconds() - first.claim.claim_time.ToMicroseconds()
    assert lease == 30_000_000 and first.item.HasField("start_time")
    second = await claim(tasks, task_id, "agent-2")
    assert second.item.id == "docs"  # push waits on build
    nothing = await claim(tasks, task_id, "agent-3")
    assert not nothing.HasField("item") and not nothing.HasField("claim") and nothing.remaining_count == 3
    claimed = await events_of(tasks, task_id, event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIMED)
    assert [(e.payload["id"], e.payload["holder_id"], e.payload["claim"]["holder_id"]) for e in claimed] == [
        ("build", "agent-1", "agent-1"), ("docs", "agent-2", "agent-2")]


async def test_concurrent_claimers_each_get_a_different_item_and_the_rest_get_none(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, *(spec(f"s{n}") for n in range(10)))
    answers = await asyncio.gather(*(claim(tasks, task_id, f"agent-{n}") for n in range(25)))
    handed = [a.item.id for a in answers if a.HasField("item")]
    assert sorted(handed) == sorted(f"s{n}" for n in range(10))
    assert sum(1 for a in answers if not a.HasField("item")) == 15


async def test_finishing_a_held_item_ends_its_claim_and_readies_what_depends_on_it(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("build"), spec("push", "build"))
    await claim(tasks, task_id, "agent-1")
    assert not (await claim(tasks, task_id, "agent-2")).HasField("item")
    done = await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="build", holder_id="agent-1",
                                                               status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    assert done.item.holder_id == ""
    nxt = await claim(tasks, task_id, "agent-2")
    assert nxt.item.id == "push" and nxt.remaining_count == 0
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [(c.item_id, c.holder_id) for c in progress.claims] == [("push", "agent-2")]
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="push", holder_id="agent-2",
                                                        status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    drained = await claim(tasks, task_id, "agent-2")
    assert not drained.HasField("item") and drained.remaining_count == 0


async def test_a_claim_can_name_an_item_or_filter_by_stage_and_tool(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a", stage="build"), spec("b", stage="test", tool="pytest"),
                         spec("c", stage="test", tool="ruff"), spec("d", "a"))
    assert (await claim(tasks, task_id, "x", stages=["test"])).item.id == "b"
    assert (await claim(tasks, task_id, "x", tool_names=["ruff"])).item.id == "c"
    assert (await claim(tasks, task_id, "y", item_id="a")).item.id == "a"
    held = await refused(claim(tasks, task_id, "z", item_id="a"), grpc.StatusCode.FAILED_PRECONDITION,
                         "ERROR_REASON_FAILED_PRECONDITION")
    assert held["holder_id"] == "y"
    await refused(claim(tasks, task_id, "z", item_id="d"), grpc.StatusCode.FAILED_PRECONDITION,
                  "ERROR_REASON_FAILED_PRECONDITION")  # waits on a
    await refused(claim(tasks, task_id, "z", item_id="nope"), grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    none = await claim(tasks, task_id, "z", stages=["deploy"])
    assert not none.HasField("item") and none.remaining_count == 0


async def test_a_claim_without_holder_or_with_a_lease_out_of_range_is_invalid(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    for request in (pb.ClaimPlanItemRequest(task_id=task_id),
                    pb.ClaimPlanItemRequest(task_id=task_id, holder_id="x", lease=seconds(0.5)),
                    pb.ClaimPlanItemRequest(task_id=task_id, holder_id="x", lease=seconds(3601))):
        await refused(tasks.ClaimPlanItem(request), grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD")
    await refused(claim(tasks, "tsk_000000000000000000000000", "x"), grpc.StatusCode.NOT_FOUND,
                  "ERROR_REASON_NOT_FOUND")


# --- leases: renew, release, expire -----------------------------------------------------------

async def test_an_expired_lease_returns_the_item_to_ready_with_an_event_and_no_other_call(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    lease_end = (await claim(tasks, task_id, "crashed", lease=1)).claim.expire_time.ToMicroseconds()
    [expired, *_] = await eventually(lambda: events_of(tasks, task_id, event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED),
                                     "the sweeper expiring the claim", interval=0.1)
    # Not before the lease ended; how soon after is the sweeper's cadence on a machine's load, not asserted.
    assert expired.create_time.ToMicroseconds() >= lease_end
    assert expired.payload["status"] == "PLAN_ITEM_STATUS_PENDING" and expired.payload["claim"]["holder_id"] == "crashed"
    item = (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).plan.items[0]
    assert (item.status, item.holder_id) == (PENDING, "")
    assert (await claim(tasks, task_id, "next")).item.id == "a"


async def test_renewing_keeps_the_item_past_its_first_lease(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    # A 3 s lease renewed every 0.5 s for 4 s: a renewal must come 2.5 s late to let it lapse (a 1 s lease
    # renewed as often lapsed if a loaded machine delayed one call by 0.5 s).
    first = await claim(tasks, task_id, "keeper", lease=3)
    for _ in range(8):
        await asyncio.sleep(0.5)
        renewed = await tasks.RenewClaim(pb.RenewClaimRequest(task_id=task_id, item_id="a", holder_id="keeper",
                                                              lease=seconds(3)))
    assert renewed.claim.expire_time.ToMicroseconds() > first.claim.expire_time.ToMicroseconds() + 1_000_000
    assert renewed.claim.claim_time == first.claim.claim_time
    assert not (await claim(tasks, task_id, "other")).HasField("item")
    assert not await events_of(tasks, task_id, event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED)
    other = await refused(tasks.RenewClaim(pb.RenewClaimRequest(task_id=task_id, item_id="a", holder_id="other")),
                          grpc.StatusCode.FAILED_PRECONDITION, NOT_HELD)
    assert other["holder_id"] == "keeper"


async def test_a_lapsed_holder_cannot_renew(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    await claim(tasks, task_id, "slow", lease=1)
    await asyncio.sleep(1.2)
    lost = await refused(tasks.RenewClaim(pb.RenewClaimRequest(task_id=task_id, item_id="a", holder_id="slow")),
                         grpc.StatusCode.FAILED_PRECONDITION, NOT_HELD)
    assert lost["holder_id"] == ""


async def test_releasing_gives_the_item_back_at_once_and_only_the_holder_may(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    await claim(tasks, task_id, "agent-1")
    await refused(tasks.ReleaseClaim(pb.ReleaseClaimRequest(task_id=task_id, item_id="a", holder_id="agent-2")),
                  grpc.StatusCode.FAILED_PRECONDITION, NOT_HELD)
    released = await tasks.ReleaseClaim(pb.ReleaseClaimRequest(task_id=task_id, item_id="a", holder_id="agent-1"))
    assert (released.item.status, released.item.holder_id) == (PENDING, "")
    assert [e.payload["claim"]["holder_id"] for e in await events_of(
        tasks, task_id, event_pb2.EVENT_TYPE_PLAN_ITEM_CLAIM_RELEASED)] == ["agent-1"]
    assert (await claim(tasks, task_id, "agent-2")).item.id == "a"


async def test_a_former_holders_update_is_refused_naming_the_current_holder(tasks: TaskServiceStub) -> None:
    task_id = await plan(tasks, spec("a"))
    await claim(tasks, task_id, "stalled", lease=1)
    await asyncio.sleep(1.1)
    assert (await claim(tasks, task_id, "rescuer")).item.id == "a"  # the claim expires here, lazily or swept
    late = pb.UpdatePlanItemRequest(task_id=task_id, item_id="a", holder_id="stalled",
                                    status=task_pb2.PLAN_ITEM_STATUS_COMPLETED)
    metadata = await refused(tasks.UpdatePlanItem(late), grpc.StatusCode.FAILED_PRECONDITION, NOT_HELD)
    assert metadata["holder_id"] == "rescuer"
    item = (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).plan.items[0]
    assert (item.status, item.holder_id) == (IN_PROGRESS, "rescuer")
    # An update without a holder id keeps today's behaviour: anyone may change any item.
    note = await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="a", summary="by hand"))
    assert note.item.summary == "by hand" and note.item.holder_id == "rescuer"


# --- holders in the views, and across a restart -----------------------------------------------

async def test_holders_show_in_get_progress_get_task_and_the_task_state_yaml(channel: grpc.aio.Channel) -> None:
    tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
    task_id = await plan(tasks, spec("a"), spec("b"), spec("c"))
    await claim(tasks, task_id, "agent-1")
    await claim(tasks, task_id, "agent-2")
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
    assert [(c.item_id, c.holder_id) for c in progress.claims] == [("a", "agent-1"), ("b", "agent-2")]
    assert progress.current.holder_id == "agent-1"
    assert "Held: a by agent-1; b by agent-2." in progress.summary
    items = (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).plan.items
    assert [i.holder_id for i in items] == ["agent-1", "agent-2", ""]
    answer = await state.GetTaskState(state_service_pb2.GetTaskStateRequest(task_id=task_id))
    assert yaml.safe_load(answer.yaml)["current"] == [{"holder": "agent-1", "subtask": "a"},
                                                      {"holder": "agent-2", "subtask": "b"}]


async def test_claims_survive_a_restart(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        task_id = await plan(TaskServiceStub(channel), spec("a"), spec("b"))
        await claim(TaskServiceStub(channel), task_id, "agent-1", lease=600)
    fresh_server.restart()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks = TaskServiceStub(channel)
        progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=task_id))
        assert [(c.item_id, c.holder_id) for c in progress.claims] == [("a", "agent-1")]
        assert (await claim(tasks, task_id, "agent-2")).item.id == "b"
        await refused(tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(
            task_id=task_id, item_id="a", holder_id="agent-2", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED)),
            grpc.StatusCode.FAILED_PRECONDITION, NOT_HELD)
        await tasks.RenewClaim(pb.RenewClaimRequest(task_id=task_id, item_id="a", holder_id="agent-1"))
