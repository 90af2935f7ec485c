"""Valid time and history (issue 29 points 1 and 3) end to end against a real server, on either engine
(`pytest --engine postgres`): reads "as of" a cursor or a time answer as the memory stood then, the
task-state history lists the versions the event log holds, and DiffTaskState diffs two of them."""

from __future__ import annotations

import grpc
import pytest
import yaml
from google.protobuf import timestamp_pb2
from google.protobuf.message import Message

from taskmem.v1 import as_of_pb2, memory_pb2, state_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error

DECISION = state_pb2.STATE_ITEM_TYPE_DECISION
ACTIVE, SUPERSEDED = state_pb2.STATE_ITEM_STATUS_ACTIVE, state_pb2.STATE_ITEM_STATUS_SUPERSEDED


@pytest.fixture
async def rpc(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub, MemoryServiceStub]:
    return TaskServiceStub(channel), StateServiceStub(channel), MemoryServiceStub(channel)


async def _newest_cursor(tasks: TaskServiceStub, task_id: str) -> int:
    events = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], page_size=500))).events
    return events[-1].cursor


async def _log_end(tasks: TaskServiceStub) -> int:
    """The log's newest cursor, read to its end (the server is shared by the module's tests)."""
    newest = 0
    while events := (await tasks.ListEvents(tpb.ListEventsRequest(page_size=500, after_cursor=newest))).events:
        newest = events[-1].cursor
    return newest


def _at(cursor: int) -> as_of_pb2.AsOf:
    return as_of_pb2.AsOf(cursor=cursor)


async def _migration(tasks: TaskServiceStub, state: StateServiceStub) -> tuple[str, int, int]:
    """A task that decided Redis, then (after `before`) switched to Memcached and finished step 0."""
    plan = [task_pb2.PlanItemSpec(id="step-0", title="Pick a cache"),
            task_pb2.PlanItemSpec(id="step-1", title="Wire it")]
    task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="Add a cache", plan=plan))).task.id
    await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Use Redis for the cache"))
    before = await _newest_cursor(tasks, task_id)
    first = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id))).items[0]
    await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Use Memcached for the cache",
                                                  supersedes=first.uid))
    await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(task_id=task_id, item_id="step-0",
                                                         status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    after = await _newest_cursor(tasks, task_id)
    return task_id, before, after


async def test_task_state_as_of_a_cursor_shows_the_decision_and_plan_that_held_then(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before, _ = await _migration(tasks, state)
    now = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml)
    then = yaml.safe_load((await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, as_of=_at(before)))).yaml)
    assert now["decisions_log"] == ["Use Memcached for the cache"]
    assert then["decisions_log"] == ["Use Redis for the cache"]
    assert [s["status"] for s in now["subtasks"]] == ["completed", "pending"]
    assert [s["status"] for s in then["subtasks"]] == ["pending", "pending"]


async def test_state_items_carry_valid_time_and_list_as_they_stood_then(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before, _ = await _migration(tasks, state)
    everything = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items
    old = next(i for i in everything if i.text == "Use Redis for the cache")
    new = next(i for i in everything if i.text == "Use Memcached for the cache")
    assert old.status == SUPERSEDED and old.HasField("valid_to") and not new.HasField("valid_to")
    assert old.valid_from == old.create_time and old.valid_to.ToMicroseconds() >= new.valid_from.ToMicroseconds()
    then = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, as_of=_at(before)))).items
    assert [(i.text, i.status, i.replaced_by) for i in then] == [("Use Redis for the cache", ACTIVE, "")]
    by_time = as_of_pb2.AsOf(time=timestamp_pb2.Timestamp(seconds=old.valid_to.seconds, nanos=old.valid_to.nanos))
    at_the_switch = (await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, as_of=by_time))).items
    assert [i.text for i in at_the_switch] == ["Use Memcached for the cache"]


async def test_task_state_before_the_task_existed_is_not_found(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _, _ = await _migration(tasks, state)
    with pytest.raises(grpc.aio.AioRpcError) as before_it:
        await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, as_of=_at(0)))
    assert_rpc_error(before_it.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    with pytest.raises(grpc.aio.AioRpcError) as empty:
        await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, as_of=as_of_pb2.AsOf()))
    assert_rpc_error(empty.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "as_of")


async def test_history_lists_each_change_newest_first_and_diff_shows_what_changed(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before, after = await _migration(tasks, state)
    versions = (await state.GetTaskStateHistory(pb.GetTaskStateHistoryRequest(task_id=task_id))).versions
    assert versions[0].cursor == after and before in [v.cursor for v in versions]
    assert [v.cursor for v in versions] == sorted((v.cursor for v in versions), reverse=True)
    assert versions[-1].change == "EVENT_TYPE_TASK_CREATED" and versions[0].change == "EVENT_TYPE_PLAN_ITEM_UPDATED"
    assert all(v.correlation_id and v.create_time.seconds for v in versions)
    paged = await state.GetTaskStateHistory(pb.GetTaskStateHistoryRequest(task_id=task_id, page_size=2))
    rest = await state.GetTaskStateHistory(pb.GetTaskStateHistoryRequest(task_id=task_id,
                                                                          page_token=paged.next_page_token))
    assert [v.cursor for v in [*paged.versions, *rest.versions]] == [v.cursor for v in versions]

    diff = await state.DiffTaskState(pb.DiffTaskStateRequest(task_id=task_id, from_cursor=before))
    assert diff.resolved_to_cursor >= after and diff.diff.startswith(f"--- {task_id}@{before}\n+++ {task_id}@")
    removed = [line for line in diff.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any("Use Redis" in line for line in removed) and any("Use Memcached" in line for line in added)
    assert any("completed" in line for line in added)
    same = await state.DiffTaskState(pb.DiffTaskStateRequest(task_id=task_id, from_cursor=after, to_cursor=after))
    assert same.diff == "" and same.from_yaml == same.to_yaml != ""
    created = await state.DiffTaskState(pb.DiffTaskStateRequest(task_id=task_id, from_cursor=0, to_cursor=after))
    assert created.from_yaml == "" and created.diff.count("\n+") > 3


async def test_history_of_an_unknown_task_is_not_found(rpc) -> None:
    _, state, _ = rpc
    with pytest.raises(grpc.aio.AioRpcError) as history:
        await state.GetTaskStateHistory(pb.GetTaskStateHistoryRequest(task_id="nope"))
    assert_rpc_error(history.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    with pytest.raises(grpc.aio.AioRpcError) as diff:
        await state.DiffTaskState(pb.DiffTaskStateRequest(task_id="nope", from_cursor=1))
    assert_rpc_error(diff.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")


# --- knowledge ----------------------------------------------------------------------------------

async def test_knowledge_as_of_a_cursor_answers_with_the_value_that_held_then(rpc) -> None:
    tasks, _, memory = rpc
    fact = memory_pb2.KNOWLEDGE_CATEGORY_FACT
    key = f"vt.node.{id(rpc)}"
    first = (await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=fact, key=key, value="CI runs on Node 18",
                                                                     confidence=0.8))).knowledge
    written = await _log_end(tasks)
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=fact, key=key, value="CI runs on Node 18",
                                                            confidence=0.9))  # confirmed: the value still holds
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=fact, key=key, value="CI runs on Node 20",
                                                            confidence=0.9))
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(category=fact, key=key, value="CI runs on Node 16",
                                                            confidence=0.1))  # rejected: never held

    async def query(**fields: object) -> list[memory_pb2.Knowledge]:
        return list((await memory.QueryKnowledge(mpb.QueryKnowledgeRequest(key_prefix=key, **fields))).knowledge)

    [now] = await query()
    [then] = await query(as_of=_at(written))
    assert (now.value, then.value) == ("CI runs on Node 20", "CI runs on Node 18")
    assert then.valid_from == first.create_time and now.valid_from.ToMicroseconds() > first.create_time.ToMicroseconds()
    assert await query(as_of=_at(written), text="node 20") == []
    assert [k.value for k in await query(as_of=_at(written), text="node 18")] == ["CI runs on Node 18"]
    assert await query(as_of=as_of_pb2.AsOf(time=timestamp_pb2.Timestamp(seconds=first.create_time.seconds - 1))) == []

    [full] = await query(include_history=True)
    replaced, rejected = full.history
    assert replaced.outcome == memory_pb2.KNOWLEDGE_VALUE_OUTCOME_REPLACED and replaced.value == "CI runs on Node 18"
    assert replaced.valid_from == first.create_time and replaced.valid_to == now.valid_from
    assert rejected.outcome == memory_pb2.KNOWLEDGE_VALUE_OUTCOME_REJECTED
    assert not rejected.HasField("valid_from") and not rejected.HasField("valid_to")
    # Each version names the event that wrote it: the replaced value the first write (at `written`, the log's
    # end then), the rejected one a later event; read as of a version's cursor, the entry holds that value.
    assert replaced.cursor == written and rejected.cursor > written
    [held] = await query(as_of=_at(replaced.cursor))
    assert held.value == replaced.value


# --- search -------------------------------------------------------------------------------------

async def test_search_marks_superseded_decisions_and_ranks_them_below_current_ones(rpc) -> None:
    tasks, state, memory = rpc
    task_id = (await tasks.CreateTask(tpb.CreateTaskRequest(name="Pick a queue"))).task.id
    old = await state.AddDecision(pb.AddDecisionRequest(
        task_id=task_id, text="Use RabbitMQ as the queue broker"))
    before = await _newest_cursor(tasks, task_id)
    new = await state.AddDecision(pb.AddDecisionRequest(  # longer, so full text scores it lower than the old one
        task_id=task_id, text="Switch to SQS, the managed service that runs in every region we deploy to, as our"
                              " queue broker from now on", supersedes=old.item.uid))
    search = mpb.SearchMemoriesRequest(query="queue broker", mode=memory_pb2.SEARCH_MODE_FULLTEXT,
                                       filter=memory_pb2.MemoryFilter(task_id=task_id))

    async def hits(**fields: object) -> list[tuple[str, bool]]:
        request = mpb.SearchMemoriesRequest()
        request.CopyFrom(search)
        for name, value in fields.items():
            if isinstance(value, Message):
                getattr(request, name).CopyFrom(value)
            else:
                setattr(request, name, value)
        return [(h.entry.id, h.superseded) for h in (await memory.SearchMemories(request)).hits]

    history = await hits(include_history=True)
    assert history[0] == (old.decision.memory_entry_id, True)  # the better text match, by score alone
    assert await hits() == [(new.decision.memory_entry_id, False), (old.decision.memory_entry_id, True)]
    assert await hits(as_of=_at(before)) == [(old.decision.memory_entry_id, False)]
    assert await hits(limit=1) == [(new.decision.memory_entry_id, False)]
    recency = mpb.RecencyRanking(recency_weight=0.5)  # re-ranked first, then the superseded go last
    assert await hits(recency_ranking=recency) == [(new.decision.memory_entry_id, False),
                                                   (old.decision.memory_entry_id, True)]
    assert await hits(recency_ranking=recency, as_of=_at(before)) == [(old.decision.memory_entry_id, False)]
    found = (await memory.SearchMemories(search)).hits
    assert found[1].valid_to.ToMicroseconds() >= found[1].entry.create_time.ToMicroseconds()


# --- context ------------------------------------------------------------------------------------

async def test_build_context_as_of_a_cursor_holds_only_what_was_known_then(rpc) -> None:
    tasks, state, _ = rpc
    task_id, before, _ = await _migration(tasks, state)
    await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER,
                                                   content="Memcached is live in staging"))
    request = pb.BuildContextRequest(task_id=task_id, token_budget=4000, query="cache")
    now = (await state.BuildContext(request)).text
    request.as_of.CopyFrom(_at(before))
    then = (await state.BuildContext(request)).text
    assert "Use Memcached for the cache" in now and "Memcached is live in staging" in now
    assert "Use Redis for the cache" in then and "Memcached" not in then


async def test_a_reactivated_item_holds_again_with_no_valid_to(rpc) -> None:
    tasks, state, _ = rpc
    task_id, _, _ = await _migration(tasks, state)
    old = next(i for i in (await state.ListStateItems(pb.ListStateItemsRequest(
        task_id=task_id, include_superseded=True))).items if i.status == SUPERSEDED)
    back = (await state.SetStateItemStatus(pb.SetStateItemStatusRequest(task_id=task_id, uid=old.uid,
                                                                        status=ACTIVE))).item
    assert back.status == ACTIVE and not back.HasField("valid_to")
