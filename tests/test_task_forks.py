"""ForkTask (issue 28 point 3) end to end against a real server, on either engine (`pytest --engine postgres`):
a fork begins as the original stood just after one of its events, the two then go their own ways, the fork
records where it came from, and its transcript and actions continue the original's by reference."""

from __future__ import annotations

import grpc
import pytest
import yaml
from google.protobuf import duration_pb2

from taskmem.cli import main
from taskmem.v1 import event_pb2, state_pb2, task_pb2, wait_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess

PENDING, IN_PROGRESS = task_pb2.PLAN_ITEM_STATUS_PENDING, task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS
COMPLETED = task_pb2.PLAN_ITEM_STATUS_COMPLETED
AGENT = task_pb2.MESSAGE_ROLE_AGENT


@pytest.fixture
async def rpc(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub, WaitServiceStub]:
    return TaskServiceStub(channel), StateServiceStub(channel), WaitServiceStub(channel)


async def _newest_cursor(tasks: TaskServiceStub, task_id: str) -> int:
    return (await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id], page_size=500))).events[-1].cursor


async def _state(state: StateServiceStub, task_id: str) -> dict:
    return yaml.safe_load((await state.GetTaskState(spb.GetTaskStateRequest(task_id=task_id))).yaml)


async def _cache_task(tasks: TaskServiceStub, state: StateServiceStub) -> tuple[str, int]:
    """A task that decided Redis and talked about it (up to the returned cursor), then switched to Memcached,
    finished step 0 and said so."""
    plan = [task_pb2.PlanItemSpec(id="step-0", title="Pick a cache", stage="design", tool_name="editor"),
            task_pb2.PlanItemSpec(id="step-1", title="Wire it", depends_on=["step-0"])]
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="Add a cache", goal="Faster pages", plan=plan))).task.id
    await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING)))
    await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Redis for the cache"))
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=AGENT, content="Looking at Redis"))
    await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary="benchmarked Redis",
                                                    status=task_pb2.ACTION_STATUS_SUCCEEDED))
    before = await _newest_cursor(tasks, task_id)
    redis = (await state.ListStateItems(spb.ListStateItemsRequest(task_id=task_id))).items[0]
    await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Use Memcached for the cache",
                                                   supersedes=redis.uid))
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="step-0", status=COMPLETED))
    await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=AGENT, content="Memcached it is"))
    return task_id, before


async def test_fork_at_an_earlier_cursor_begins_with_the_plan_and_state_that_stood_then(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before = await _cache_task(tasks, state)
    etag = (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).task.etag
    forked = await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, at_cursor=before))
    fork = forked.task
    assert fork.id != task_id and fork.name == "Add a cache (fork)" and fork.goal == "Faster pages"
    assert (fork.forked_from, fork.forked_at) == (task_id, before)
    assert fork.status == task_pb2.TASK_STATUS_EXECUTING
    assert [(i.id, i.status, i.stage, i.tool_name, list(i.depends_on)) for i in forked.plan.items] == [
        ("step-0", PENDING, "design", "editor", []), ("step-1", PENDING, "", "", ["step-0"])]
    then = await _state(state, fork.id)
    assert then["decisions_log"] == ["Use Redis for the cache"]
    assert [s["status"] for s in then["subtasks"]] == ["pending", "pending"]
    assert (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).task.etag == etag  # the original is untouched
    assert (await _state(state, task_id))["decisions_log"] == ["Use Memcached for the cache"]


async def test_fork_at_now_copies_the_current_state_and_later_changes_stay_on_their_side(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _ = await _cache_task(tasks, state)
    newest = await _newest_cursor(tasks, task_id)
    fork = (await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, name="Try Valkey"))).task
    assert fork.name == "Try Valkey" and (fork.forked_from, fork.forked_at) == (task_id, newest)
    assert (await _state(state, fork.id))["decisions_log"] == ["Use Memcached for the cache"]
    items = (await state.ListStateItems(spb.ListStateItemsRequest(task_id=fork.id, include_superseded=True))).items
    memcached = next(i for i in items if i.text == "Use Memcached for the cache")
    redis = next(i for i in items if i.text == "Use Redis for the cache")
    assert redis.status == state_pb2.STATE_ITEM_STATUS_SUPERSEDED and redis.replaced_by == memcached.uid

    await state.AddDecision(spb.AddDecisionRequest(task_id=fork.id, text="Use Valkey for the cache",
                                                   supersedes=memcached.uid))
    await tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=fork.id, item_id="step-1", status=IN_PROGRESS))
    await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text="Log every request as a JSON line"))
    original, forked = await _state(state, task_id), await _state(state, fork.id)
    assert original["decisions_log"] == ["Use Memcached for the cache", "Log every request as a JSON line"]
    assert forked["decisions_log"] == ["Use Valkey for the cache"]
    assert [s["status"] for s in original["subtasks"]] == ["completed", "pending"]
    assert [s["status"] for s in forked["subtasks"]] == ["completed", "in_progress"]


async def test_fork_shares_the_transcript_and_actions_up_to_the_fork_point_then_its_own(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before = await _cache_task(tasks, state)
    fork = (await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, at_cursor=before))).task
    await tasks.PostMessage(pb.PostMessageRequest(task_id=fork.id, role=AGENT, content="Trying Redis after all"))
    await tasks.RecordAction(pb.RecordActionRequest(task_id=fork.id, summary="configured Redis",
                                                    status=task_pb2.ACTION_STATUS_SUCCEEDED))
    messages = (await tasks.ListMessages(pb.ListMessagesRequest(task_id=fork.id))).messages
    assert [(m.content, m.thread_id) for m in messages] == [("Looking at Redis", task_id),
                                                            ("Trying Redis after all", fork.id)]
    first = await tasks.ListMessages(pb.ListMessagesRequest(task_id=fork.id, page_size=1))
    rest = await tasks.ListMessages(pb.ListMessagesRequest(task_id=fork.id, page_token=first.next_page_token))
    assert [m.id for m in [*first.messages, *rest.messages]] == [m.id for m in messages]
    actions = (await tasks.ListActions(pb.ListActionsRequest(task_id=fork.id))).actions
    assert [(a.summary, a.task_id) for a in actions] == [("benchmarked Redis", task_id), ("configured Redis", fork.id)]
    original = (await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id))).messages
    assert [m.content for m in original] == ["Looking at Redis", "Memcached it is"]  # no copy, no fork's messages


async def test_a_fork_of_a_fork_continues_the_whole_chain_each_up_to_its_fork_point(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before = await _cache_task(tasks, state)
    child = (await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, at_cursor=before))).task
    await tasks.PostMessage(pb.PostMessageRequest(task_id=child.id, role=AGENT, content="child says"))
    grandchild = (await tasks.ForkTask(pb.ForkTaskRequest(task_id=child.id))).task
    await tasks.PostMessage(pb.PostMessageRequest(task_id=child.id, role=AGENT, content="child, later"))
    await tasks.PostMessage(pb.PostMessageRequest(task_id=grandchild.id, role=AGENT, content="grandchild says"))
    messages = (await tasks.ListMessages(pb.ListMessagesRequest(task_id=grandchild.id))).messages
    assert [m.content for m in messages] == ["Looking at Redis", "child says", "grandchild says"]
    assert (grandchild.forked_from, grandchild.name) == (child.id, "Add a cache (fork) (fork)")


async def test_a_retried_fork_with_the_same_request_id_returns_the_same_task(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _ = await _cache_task(tasks, state)
    first = await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, request_id="fork-once"))
    again = await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, request_id="fork-once"))
    assert again.task.id == first.task.id


async def test_fork_emits_task_forked_on_both_tasks(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _ = await _cache_task(tasks, state)
    fork = (await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id))).task
    for side in (task_id, fork.id):
        events = (await tasks.ListEvents(pb.ListEventsRequest(
            task_ids=[side], types=[event_pb2.EVENT_TYPE_TASK_FORKED]))).events
        assert len(events) == 1 and events[0].payload["forked_from"] == task_id
        assert events[0].payload["id"] == fork.id


async def test_claims_and_waits_on_a_person_are_not_copied(rpc) -> None:
    tasks, _, waits = rpc
    plan = [task_pb2.PlanItemSpec(id="a", title="A"), task_pb2.PlanItemSpec(id="b", title="B")]
    task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="Two agents", plan=plan))).task.id
    await tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING)))
    claimed = await tasks.ClaimPlanItem(pb.ClaimPlanItemRequest(task_id=task_id, holder_id="agent-1", item_id="a",
                                                                 lease=duration_pb2.Duration(seconds=60)))
    assert claimed.item.status == IN_PROGRESS
    await waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=wait_pb2.WaitTarget(
        external=wait_pb2.ExternalTarget(kind=wait_pb2.EXTERNAL_WAIT_KIND_INPUT, question="Which region?"))))
    assert (await tasks.GetTask(pb.GetTaskRequest(task_id=task_id))).task.status == task_pb2.TASK_STATUS_INPUT_REQUIRED
    forked = await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id))
    assert forked.task.status == task_pb2.TASK_STATUS_EXECUTING
    assert [(i.status, i.holder_id) for i in forked.plan.items] == [(PENDING, ""), (PENDING, "")]
    progress = await tasks.GetProgress(pb.GetProgressRequest(task_id=forked.task.id))
    assert not progress.claims
    listed = await waits.ListWaits(wpb.ListWaitsRequest(task_id=forked.task.id))
    assert not listed.waits


async def test_fork_errors_name_the_field(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _ = await _cache_task(tasks, state)
    other = (await tasks.CreateTask(pb.CreateTaskRequest(name="Another"))).task.id
    other_cursor = await _newest_cursor(tasks, other)
    with pytest.raises(grpc.aio.AioRpcError) as unknown:
        await tasks.ForkTask(pb.ForkTaskRequest(task_id="tsk_000000000000000000000000"))
    assert_rpc_error(unknown.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    with pytest.raises(grpc.aio.AioRpcError) as foreign:
        await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, at_cursor=other_cursor))
    assert_rpc_error(foreign.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "at_cursor")
    with pytest.raises(grpc.aio.AioRpcError) as future:
        await tasks.ForkTask(pb.ForkTaskRequest(task_id=task_id, at_cursor=other_cursor + 10**9))
    assert_rpc_error(future.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "at_cursor")
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await tasks.ForkTask(pb.ForkTaskRequest())
    assert_rpc_error(missing.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "task_id")


def test_cli_tasks_fork_prints_the_new_task_and_where_it_came_from(
        server: ServerProcess, capsys: pytest.CaptureFixture[str]) -> None:
    with grpc.insecure_channel(server.address) as channel:
        tasks = TaskServiceStub(channel)
        created = tasks.CreateTask(pb.CreateTaskRequest(name="Ship it", plan=[task_pb2.PlanItemSpec(id="go", title="Go")]))
        task_id = created.task.id
        at = tasks.ListEvents(pb.ListEventsRequest(task_ids=[task_id])).events[-1].cursor  # its plan, all pending
        tasks.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task_id, item_id="go", status=COMPLETED))
    capsys.readouterr()
    assert main(["tasks", "fork", task_id, "--at", str(at), "--name", "Ship it differently",
                 "--address", server.address]) == 0
    out = capsys.readouterr().out
    forked_line = next(line for line in out.splitlines() if "forked from:" in line)
    assert "Ship it differently" in out and forked_line.endswith(f"{task_id} at cursor {at}") and "[ ] go" in out
