"""StateService end to end against a real server: task state under a budget, structured state items
reconciled with and without a model, working memory across restarts, BuildContext and QueryTask."""

from __future__ import annotations

import asyncio
import json
import re
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from taskmem.tiktoken_offline import token_counter
from taskmem.v1 import event_pb2, memory_pb2, state_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

COUNTER = token_counter()
USER, AGENT = task_pb2.MESSAGE_ROLE_USER, task_pb2.MESSAGE_ROLE_AGENT
DECISION, ACTION, QUESTION = (state_pb2.STATE_ITEM_TYPE_DECISION, state_pb2.STATE_ITEM_TYPE_ACTION,
                              state_pb2.STATE_ITEM_TYPE_QUESTION)
ACTIVE, SUPERSEDED, DONE = (state_pb2.STATE_ITEM_STATUS_ACTIVE, state_pb2.STATE_ITEM_STATUS_SUPERSEDED,
                            state_pb2.STATE_ITEM_STATUS_DONE)


@pytest.fixture
async def rpc(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub]:
    return TaskServiceStub(channel), StateServiceStub(channel)


async def _task(tasks: TaskServiceStub, items: int = 3, done: int = 1, name: str = "Migrate the database") -> str:
    plan = [task_pb2.PlanItemSpec(id=f"step-{n}", title=f"Step {n} of the migration",
                             depends_on=[f"step-{n - 1}"] if n else []) for n in range(items)]
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name=name, goal="Move MySQL to PostgreSQL",
                                                         workspace="/srv/app", plan=plan))).task
    for n in range(done):
        await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(
            task_id=task.id, item_id=f"step-{n}", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED, summary=f"did {n}"))
    if done < items:
        await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(
            task_id=task.id, item_id=f"step-{done}", status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS,
            active_issue="ENUM types need a mapping"))
    return task.id


async def _say(tasks: TaskServiceStub, thread: str, role: int, text: str, *, standalone: bool = False) -> str:
    request = tpb.PostMessageRequest(thread_id=thread, role=role, content=text) if standalone else \
        tpb.PostMessageRequest(task_id=thread, role=role, content=text)
    return (await tasks.PostMessage(request)).message.id


def _candidate(kind: int, text: str, refs: list[str] = (), **fields: object) -> state_pb2.StateItemCandidate:
    return state_pb2.StateItemCandidate(type=kind, text=text, refs=list(refs), **fields)


# --- task state --------------------------------------------------------------------------------

async def test_task_state_is_the_seed_yaml_with_typed_twin_within_the_default_budget(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks, items=4, done=2)
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    data = yaml.safe_load(answer.yaml)
    assert data["task"]["id"] == task_id and data["task"]["status"] == "pending"
    assert [s["status"] for s in data["subtasks"]] == ["completed", "completed", "in_progress", "pending"]
    assert data["subtasks"][2]["active_issue"] == "ENUM types need a mapping"
    assert answer.token_budget == 1500 and answer.token_count == COUNTER.count(answer.yaml) <= 1500
    assert [s.id for s in answer.state.subtasks] == ["step-0", "step-1", "step-2", "step-3"]
    assert answer.state.completed_count == 2 and list(answer.omitted) == []


async def test_a_long_plan_shows_the_current_item_and_the_next_three_pending(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks, items=30, done=12)
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    assert [s.id for s in answer.state.subtasks] == ["step-12", "step-13", "step-14", "step-15"]
    assert (answer.state.completed_count, answer.state.total_subtasks) == (12, 30)
    assert "12/30 completed" in answer.yaml


async def test_a_tight_budget_is_kept_and_the_dropped_detail_is_named(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks, items=12, done=5)
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=60))
    assert COUNTER.count(answer.yaml) <= 60 and answer.token_count <= 60
    assert answer.omitted and yaml.safe_load(answer.yaml)["task"]["id"] == task_id


async def test_task_state_errors_name_the_field(rpc) -> None:
    _, state = rpc
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await state.GetTaskState(pb.GetTaskStateRequest(task_id="tsk_nope"))
    assert_rpc_error(missing.value, grpc.StatusCode.NOT_FOUND, "ERROR_REASON_NOT_FOUND")
    with pytest.raises(grpc.aio.AioRpcError) as negative:
        await state.GetTaskState(pb.GetTaskStateRequest(task_id="tsk_nope", token_budget=-1))
    assert_rpc_error(negative.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "token_budget")


# --- structured state without a model ----------------------------------------------------------

async def test_agent_items_reconcile_without_a_model(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks)
    first = await _say(tasks, task_id, USER, "Let's use Redis for caching")
    added = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        _candidate(DECISION, "Use Redis for caching", [first], topic_tags=["caching"]),
        _candidate(ACTION, "Set up connection pooling")]))
    assert (added.report.inserted, added.report.dropped) == (2, 0)
    redis = next(i for i in added.items if i.type == DECISION)
    assert re.fullmatch(r"d_[0-9a-f]{12}", redis.uid) and redis.source == state_pb2.STATE_ITEM_SOURCE_AGENT
    again = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        _candidate(DECISION, "  use redis for CACHING ", [first])]))
    assert again.report.merged == 1 and again.report.results[0].target_uid == redis.uid
    switch = await _say(tasks, task_id, USER, "Let's switch to Memcached instead of Redis")
    changed = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        _candidate(DECISION, "Use Memcached for caching instead of Redis", [switch], topic_tags=["caching"])]))
    assert changed.report.superseded == 1
    old = (await state.ExpandStateItem(pb.ExpandStateItemRequest(task_id=task_id, uid=redis.uid))).item
    assert old.status == SUPERSEDED and old.replaced_by == changed.report.results[0].uid
    assert old.supersession_evidence.ref_message_id == switch and old.supersession_evidence.trigger


async def test_rival_values_of_one_slot_from_the_agent_are_kept_as_an_open_question(rpc) -> None:
    # Nobody asked for a change (the agent read both in its own notes): neither wins, both are flagged, and the
    # report asks the question.
    tasks, state = rpc
    thread = "chat-rivals"
    said = await _say(tasks, thread, AGENT, "The supplier sheet says vials; the shipping note says syringes",
                      standalone=True)
    first = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(DECISION, "Pack the vaccines in vials", [said])]))
    second = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(DECISION, "Pack the vaccines in syringes", [said])]))
    assert second.report.conflicted == 1
    result = second.report.results[0]
    assert result.outcome == state_pb2.RECONCILE_OUTCOME_CONFLICTED and result.target_uid == first.items[0].uid
    assert "does [" in result.reason and "stand beside it, or say the same?" in result.reason
    listed = {i.uid: i for i in (await state.ListStateItems(pb.ListStateItemsRequest(thread_id=thread))).items}
    assert listed[first.items[0].uid].conflict and listed[result.uid].conflict
    assert listed[result.uid].conflict_with == [first.items[0].uid]
    # A last adjunct that answers another question may be another item or another value: never merged away.
    other = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(DECISION, "Pack the vaccines within 2 hours", [said])]))
    assert other.report.merged == 0


async def test_a_near_candidate_no_rule_links_is_kept_and_the_response_asks_about_it(rpc) -> None:
    # Other words about the same thing: it may replace the item or restate it, and without a model nobody can
    # tell. It is kept (never merged away), and the write's response asks and names the call for each answer.
    tasks, state = rpc
    thread = "chat-near"
    said = await _say(tasks, thread, AGENT, "Notes from the data team", standalone=True)
    first = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(DECISION, "Use PostgreSQL for the reporting database", [said])]))
    near = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(DECISION, "Reports will read from a columnar warehouse", [said])]))
    assert near.report.conflicted == 1 and near.report.merged == 0
    result = near.report.results[0]
    assert result.target_uid == first.items[0].uid and f"old_uid: {first.items[0].uid}, answer: REPLACES" in result.settle_with


async def test_items_list_render_expand_pin_and_change_status(rpc) -> None:
    tasks, state = rpc
    thread = "chat-render"
    asked = await _say(tasks, thread, USER, "We must ship on Friday; run migration 025 first", standalone=True)
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(ACTION, "Run migration 025", [asked], topic_tags=["deploy"]),
        _candidate(state_pb2.STATE_ITEM_TYPE_CONSTRAINT, "Ship on Friday", [asked], topic_tags=["release"]),
        _candidate(QUESTION, "Cache embeddings client-side?", [asked],
                   confidence=state_pb2.STATE_ITEM_CONFIDENCE_LOW, topic_tags=["arch"])]))
    listed = (await state.ListStateItems(pb.ListStateItemsRequest(thread_id=thread))).items
    assert [i.type for i in listed] == [state_pb2.STATE_ITEM_TYPE_CONSTRAINT, ACTION, QUESTION]
    rendered = await state.RenderState(pb.RenderStateRequest(thread_id=thread))
    lines = rendered.text.splitlines()
    assert re.fullmatch(r"State \(updated: \d{4}-\d\d-\d\dT\d\d:\d\dZ, items: 3\)", lines[0])
    assert re.fullmatch(r"\[a_[0-9a-f]{12}\] ACTION \(open\) deploy: Run migration 025 \[refs:1\]", lines[2])
    assert lines[3].endswith("QUESTION (open, low) arch: Cache embeddings client-side? [refs:1]")
    action = listed[1]
    expanded = await state.ExpandStateItem(pb.ExpandStateItemRequest(thread_id=thread, uid=action.uid))
    assert [m.id for m in expanded.messages] == [asked]
    pinned = await state.PinStateItem(pb.PinStateItemRequest(thread_id=thread, uid=action.uid, pinned=True))
    assert pinned.item.pinned
    assert (await state.ListStateItems(pb.ListStateItemsRequest(thread_id=thread))).items[0].uid == action.uid
    done = await state.SetStateItemStatus(pb.SetStateItemStatusRequest(thread_id=thread, uid=action.uid, status=DONE))
    assert done.item.status == DONE
    with pytest.raises(grpc.aio.AioRpcError) as wrong:
        await state.SetStateItemStatus(pb.SetStateItemStatusRequest(thread_id=thread, uid=action.uid, status=ACTIVE))
    assert_rpc_error(wrong.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "status")
    tight = await state.RenderState(pb.RenderStateRequest(thread_id=thread, token_budget=30))
    assert tight.token_count <= 30 and tight.items_rendered + tight.items_omitted == 3


async def test_listing_pages_and_filters_by_type(rpc) -> None:
    tasks, state = rpc
    thread = "chat-pages"
    said = await _say(tasks, thread, USER, "lots of actions", standalone=True)
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id=thread, items=[
        _candidate(ACTION, f"Do chore number {n}", [said]) for n in range(7)] + [
        _candidate(DECISION, "Keep the chores list short", [said])]))
    seen, token = [], ""
    while True:
        page = await state.ListStateItems(pb.ListStateItemsRequest(thread_id=thread, types=[ACTION], page_size=3,
                                                                    page_token=token))
        seen += [i.uid for i in page.items]
        token = page.next_page_token
        if not token:
            break
    assert len(seen) == len(set(seen)) == 7


async def test_candidates_with_refs_outside_the_thread_are_dropped(rpc) -> None:
    tasks, state = rpc
    answer = await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id="chat-refs", items=[
        _candidate(DECISION, "Use a ref from nowhere", ["msg_000000000000000000000000"])]))
    assert answer.report.dropped == 1 and answer.report.results[0].outcome == state_pb2.RECONCILE_OUTCOME_DROPPED


async def test_bad_candidates_name_the_field(rpc) -> None:
    _, state = rpc
    with pytest.raises(grpc.aio.AioRpcError) as untyped:
        await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id="t", items=[
            state_pb2.StateItemCandidate(text="x")]))
    assert_rpc_error(untyped.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "items[0].type")
    with pytest.raises(grpc.aio.AioRpcError) as too_many:
        await state.UpsertStateItems(pb.UpsertStateItemsRequest(thread_id="t", items=[
            _candidate(ACTION, f"a{n}") for n in range(26)]))
    assert_rpc_error(too_many.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_LIMIT_EXCEEDED", "items")


# --- working memory ----------------------------------------------------------------------------

async def test_working_memory_round_trips_and_refuses_a_stale_etag(rpc) -> None:
    _, state = rpc
    empty = (await state.GetWorkingMemory(pb.GetWorkingMemoryRequest(agent_id="agent-wm"))).working_memory
    assert empty.agent_id == "agent-wm" and not empty.etag
    memory = state_pb2.WorkingMemory(agent_id="agent-wm", current_plan="build, push, deploy",
                                     active_constraints=["no force pushes"], scratchpad=["registry is ghcr.io"])
    memory.task_context.update({"task_id": "tsk_1", "step": 2})
    stored = (await state.PutWorkingMemory(pb.PutWorkingMemoryRequest(working_memory=memory))).working_memory
    read = (await state.GetWorkingMemory(pb.GetWorkingMemoryRequest(agent_id="agent-wm"))).working_memory
    assert read == stored and read.current_plan == "build, push, deploy" and read.task_context["step"] == 2
    memory.etag = 'W/"0"'
    with pytest.raises(grpc.aio.AioRpcError) as stale:
        await state.PutWorkingMemory(pb.PutWorkingMemoryRequest(working_memory=memory))
    assert_rpc_error(stale.value, grpc.StatusCode.ABORTED, "ERROR_REASON_STALE_ETAG")


async def test_working_memory_survives_a_graceful_restart(fresh_server: ServerProcess) -> None:
    fresh_server.start()
    memory = state_pb2.WorkingMemory(agent_id="agent-restart", current_plan="resume at step 4",
                                     scratchpad=["image v1.2.3 pushed"])
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        stored = (await StateServiceStub(channel).PutWorkingMemory(
            pb.PutWorkingMemoryRequest(working_memory=memory))).working_memory
    fresh_server.restart()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        read = (await StateServiceStub(channel).GetWorkingMemory(
            pb.GetWorkingMemoryRequest(agent_id="agent-restart"))).working_memory
    assert read == stored


async def test_working_memory_is_scoped_to_the_namespace(fresh_server: ServerProcess) -> None:
    server = ServerProcess(fresh_server.database, "--api-key", "k1:team-a,team-b")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            state = StateServiceStub(channel)
            a = [("authorization", "Bearer k1"), ("x-taskmem-namespace", "team-a")]
            b = [("authorization", "Bearer k1"), ("x-taskmem-namespace", "team-b")]
            await state.PutWorkingMemory(pb.PutWorkingMemoryRequest(working_memory=state_pb2.WorkingMemory(
                agent_id="shared-name", current_plan="team a's plan")), metadata=a)
            other = await state.GetWorkingMemory(pb.GetWorkingMemoryRequest(agent_id="shared-name"), metadata=b)
            own = await state.GetWorkingMemory(pb.GetWorkingMemoryRequest(agent_id="shared-name"), metadata=a)
        assert other.working_memory.current_plan == "" and own.working_memory.current_plan == "team a's plan"
    finally:
        server.stop()


# --- BuildContext and QueryTask without a model ------------------------------------------------

async def test_build_context_fills_sections_by_share_and_gives_the_rest_to_the_tail(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks, items=5, done=2)
    said = await _say(tasks, task_id, USER, "Use pgloader for the bulk transfer")
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        _candidate(DECISION, "Use pgloader for the bulk transfer", [said], topic_tags=["migration"])]))
    for n in range(60):
        await _say(tasks, task_id, AGENT, f"progress note {n}: converted table number {n} of 47 " + "x " * 20)
    built = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=800))
    sections = {s.name: s for s in built.sections}
    assert [s.name for s in built.sections] == ["summary", "state", "knowledge", "memories", "tail"]
    assert sections["summary"].allowed_tokens == 48 and sections["state"].allowed_tokens == 112
    assert all(s.used_tokens <= s.allowed_tokens for s in built.sections)
    assert "## state\nState (updated:" in built.text and "Use pgloader" in built.text
    assert sections["tail"].truncated and sections["tail"].omitted.endswith("older messages")
    assert "progress note 59" in built.text and built.token_count == COUNTER.count(built.text) <= 800
    minimal = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=800,
                                                              mode=state_pb2.CONTEXT_MODE_MINIMAL))
    assert {s.name: s.allowed_tokens for s in minimal.sections}["knowledge"] == 64


async def test_build_context_shows_every_change_committed_after_an_earlier_call(rpc, channel) -> None:
    tasks, state = rpc
    memory = MemoryServiceStub(channel)
    task_id = await _task(tasks, items=3, done=0)

    async def context(**thread: str) -> str:
        return (await state.BuildContext(pb.BuildContextRequest(token_budget=2000, **thread))).text

    assert "the first note" not in await context(task_id=task_id)
    await _say(tasks, task_id, AGENT, "the first note")
    assert "the first note" in await context(task_id=task_id)
    await tasks.UpdatePlanItem(tpb.UpdatePlanItemRequest(
        task_id=task_id, item_id="step-0", status=task_pb2.PLAN_ITEM_STATUS_BLOCKED, active_issue="disk is full"))
    assert "disk is full" in await context(task_id=task_id)
    await memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(
        category=memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION, key="quoting", value="identifiers are snake_case"))
    assert "identifiers are snake_case" in await context(task_id=task_id)  # an event of no task
    thread = f"chat-{task_id}"
    await _say(tasks, thread, USER, "a standalone question", standalone=True)
    assert "a standalone question" in await context(thread_id=thread)
    await _say(tasks, thread, AGENT, "a standalone answer", standalone=True)
    assert "a standalone answer" in await context(thread_id=thread)


async def test_query_task_without_a_model_answers_from_progress_and_says_so(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks, items=3, done=1)
    answer = await state.QueryTask(pb.QueryTaskRequest(task_id=task_id, question="where was I?"))
    assert answer.answer.startswith("Completed 1/3") and not answer.from_model
    assert "no model is configured" in answer.note


async def test_extraction_without_a_model_says_what_to_configure(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks)
    await _say(tasks, task_id, USER, "Let's use Redis")
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert_rpc_error(failed.value, grpc.StatusCode.FAILED_PRECONDITION, "ERROR_REASON_NOT_CONFIGURED")


# --- decisions, errors and the mirror file -----------------------------------------------------

# Twelve decisions about unrelated things (none near another: none is asked about).
DISTINCT_DECISIONS = ["Host the docs on GitHub Pages", "Invoice customers monthly", "Name the mascot Pip",
                      "Paint the office walls green", "Order pizza for the launch party", "Hire two interns in June",
                      "Back up laptops to an external drive", "Print flyers on recycled paper",
                      "Use tabs for indentation", "Book the venue in Lisbon", "Water the plants on Fridays",
                      "Translate the app into Korean"]
DISTINCT_ERRORS = ["The printer ran out of toner", "DNS lookup for the mail host timed out",
                   "The spreadsheet macro hit a divide by zero", "Payroll export rejected by the bank",
                   "Camera battery died mid shoot", "Disk quota exceeded on the build box", "The ferry was cancelled"]


async def test_decisions_and_errors_are_memory_entries_and_the_yaml_shows_the_newest(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks)
    added = [await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text, subtask_id="step-1"))
             for text in DISTINCT_DECISIONS]
    assert added[0].decision.memory_entry_id.startswith("mem_")
    for n, error in enumerate(DISTINCT_ERRORS):
        await state.AddError(pb.AddErrorRequest(task_id=task_id, subtask_id="step-1", error=error,
                                                resolution=f"retried {n}"))
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    data = yaml.safe_load(answer.yaml)
    assert data["decisions_log"] == DISTINCT_DECISIONS[2:]
    assert [e["error"] for e in data["errors_encountered"]] == DISTINCT_ERRORS[2:]
    assert data["errors_encountered"][-1] == {"subtask": "step-1", "error": DISTINCT_ERRORS[-1],
                                              "resolution": "retried 6"}
    assert [d.text for d in answer.state.decisions][-1] == DISTINCT_DECISIONS[-1]
    events = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[
        event_pb2.EVENT_TYPE_TASK_STATE_DECISION_ADDED, event_pb2.EVENT_TYPE_TASK_STATE_ERROR_ADDED]))).events
    assert len(events) == 19


async def test_a_retried_decision_is_recorded_once(rpc) -> None:
    tasks, state = rpc
    task_id = await _task(tasks)
    request = pb.AddDecisionRequest(task_id=task_id, text="Use pgloader", request_id="req-decision-1")
    first, second = await state.AddDecision(request), await state.AddDecision(request)
    assert first == second
    answer = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    assert [d.text for d in answer.state.decisions] == ["Use pgloader"]


async def test_the_yaml_mirror_file_follows_every_change_of_the_task(fresh_server: ServerProcess,
                                                                     tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    fresh_server.env["TASKMEM_STATE_YAML_MIRROR_DIR"] = str(mirror)
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
        task_id = await _task(tasks)
        await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Keep ENUMs as VARCHAR"))
        path = mirror / "default" / f"{task_id}.yaml"
        await eventually(lambda: path.exists() and "Keep ENUMs" in path.read_text(), "the YAML mirror")
        expected = (await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml
        assert path.read_text() == expected
        assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left behind


# --- extraction against a scripted OpenAI-compatible model -------------------------------------

# What the model's system prompt says when the server asks it to extract state, or to answer a question.
EXTRACTOR = "structured state extractor"
ASKED = "You answer questions about an agent's task"
_LINE = re.compile(r"^\[(msg_[0-9a-f]+)\] (user|assistant|system|tool): (.*)$", re.MULTILINE)
_EXISTING = re.compile(r"^\[(d_[0-9a-f]{12})\] decision \(active\): (.*)$", re.MULTILINE)


def seed_examples(system: str, user: str) -> str:
    """The extraction prompt's two examples as a model would answer them, from what the prompt shows."""
    if "structured state extractor" not in system:
        return "Steps 1-2 are done; step 3 (ENUM mapping) is in progress."
    lines = _LINE.findall(user)
    items = []
    for message_id, role, text in lines:
        if role == "user" and "Redis for caching" in text:
            items.append({"type_tag": "decision", "text": "Use Redis for caching", "status": "active",
                          "confidence": "high", "topic_tags": ["caching"],
                          "refs": [message_id] + [m for m, r, _ in lines if r == "assistant"], "supersedes": None,
                          "conflict": False})
        if role == "user" and "Memcached instead of Redis" in text:
            old = next((uid for uid, t in _EXISTING.findall(user) if "Redis" in t), None)
            items.append({"type_tag": "decision", "text": "Use Memcached for caching instead of Redis",
                          "status": "active", "confidence": "high", "topic_tags": ["caching"], "refs": [message_id],
                          "supersedes": old, "conflict": False})
    return json.dumps(items)


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm() as model:
        yield model


def _llm_env(llm: ScriptedLLM, **extra: str) -> dict[str, str]:
    return {"TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0",
            **extra}


@pytest.fixture(scope="module")
def llm_server(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("state-llm") / "taskmem.db",
                            env=_llm_env(llm, TASKMEM_STATE_EXTRACTION_TIMEOUT_SECONDS="2"))
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def llm_rpc(llm_server: ServerProcess, llm: ScriptedLLM) -> AsyncIterator[tuple[TaskServiceStub, StateServiceStub]]:
    llm.answer = seed_examples
    llm.requests.clear()
    async with grpc.aio.insecure_channel(llm_server.address) as channel:
        yield TaskServiceStub(channel), StateServiceStub(channel)


async def test_the_seed_examples_end_with_redis_superseded_and_memcached_active(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks)
    await _say(tasks, task_id, USER, "Let's use Redis for caching")
    await _say(tasks, task_id, AGENT, "OK")
    first = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert (first.report.extracted, first.report.inserted, first.report.messages_read) == (1, 1, 2)
    redis = first.items[0]
    switch = await _say(tasks, task_id, USER, "Let's switch to Memcached instead of Redis")
    second = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert f"[{redis.uid}] decision (active): Use Redis for caching" in llm.prompts_of(EXTRACTOR)[-1]
    assert second.report.superseded == 1 and second.report.messages_read == 1
    items = {i.text: i for i in (await state.ListStateItems(
        pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))).items}
    old, new = items["Use Redis for caching"], items["Use Memcached for caching instead of Redis"]
    assert old.status == SUPERSEDED and old.replaced_by == new.uid
    assert old.supersession_evidence.ref_message_id == switch
    assert old.supersession_evidence.candidate_uid == new.uid and old.supersession_evidence.trigger
    assert new.status == ACTIVE and not new.conflict
    rendered = (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text
    assert "Memcached" in rendered and "Use Redis for caching" not in rendered
    events = (await tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_STATE_EXTRACTION_COMPLETED]))).events
    assert [e.payload["superseded"] for e in events] == [0, 1]


async def test_a_second_run_with_no_new_messages_calls_no_model(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks)
    await _say(tasks, task_id, USER, "Let's use Redis for caching")
    await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    calls = len(llm.prompts_of(EXTRACTOR))
    again = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert len(llm.prompts_of(EXTRACTOR)) == calls
    assert again.report.skipped_reason == state_pb2.EXTRACTION_SKIP_REASON_NO_NEW_MESSAGES and not again.items


async def test_a_batch_without_a_user_message_is_skipped_and_passed(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    thread = "chat-agent-only"
    await _say(tasks, thread, AGENT, "Working on it", standalone=True)
    skipped = await state.ExtractState(pb.ExtractStateRequest(thread_id=thread))
    assert skipped.report.skipped_reason == state_pb2.EXTRACTION_SKIP_REASON_NO_USER_MESSAGE and not llm.prompts_of(EXTRACTOR)
    asked = await _say(tasks, thread, USER, "Let's use Redis for caching", standalone=True)
    await state.ExtractState(pb.ExtractStateRequest(thread_id=thread))
    shown = _LINE.findall(llm.prompts_of(EXTRACTOR)[-1])
    assert [m for m, _, _ in shown] == [asked]


async def test_the_batch_is_capped_and_the_rest_is_read_next_time(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    thread = "chat-capped"
    said = [await _say(tasks, thread, USER, f"note {n}", standalone=True) for n in range(25)]
    first = await state.ExtractState(pb.ExtractStateRequest(thread_id=thread))
    second = await state.ExtractState(pb.ExtractStateRequest(thread_id=thread))
    assert (first.report.messages_read, second.report.messages_read) == (20, 5)
    assert [m for m, _, _ in _LINE.findall(llm.prompts_of(EXTRACTOR)[-1])] == said[20:]


async def test_a_model_answer_that_is_not_json_changes_nothing(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks)
    await _say(tasks, task_id, USER, "Let's use Redis for caching")
    llm.answer = lambda system, user: "Sure! Here are the items you asked for."
    with pytest.raises(grpc.aio.AioRpcError) as garbage:
        await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert_rpc_error(garbage.value, grpc.StatusCode.UNAVAILABLE, "ERROR_REASON_MODEL_OUTPUT_INVALID")
    llm.answer = lambda system, user: "```json\n" + seed_examples(system, user) + "\n```"
    retried = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert retried.report.inserted == 1 and retried.report.messages_read == 1


async def test_a_model_that_does_not_answer_in_time_is_a_deadline_error(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks)
    await _say(tasks, task_id, USER, "Let's use Redis for caching")
    llm.hold.set()
    llm.release.clear()
    try:
        with pytest.raises(grpc.aio.AioRpcError) as slow:
            await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    finally:
        llm.hold.clear()
        llm.release.set()
    assert_rpc_error(slow.value, grpc.StatusCode.DEADLINE_EXCEEDED, "ERROR_REASON_MODEL_TIMEOUT")


async def test_a_crash_between_the_model_call_and_the_commit_re_extracts_the_batch(
        fresh_server: ServerProcess, llm: ScriptedLLM) -> None:
    llm.answer, llm.requests[:] = seed_examples, []
    fresh_server.env.update(_llm_env(llm))
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
        task_id = await _task(tasks)
        said = await _say(tasks, task_id, USER, "Let's use Redis for caching")
        llm.hold.set()
        llm.release.clear()
        call = asyncio.ensure_future(state.ExtractState(pb.ExtractStateRequest(task_id=task_id)))
        await eventually(lambda: llm.prompts_of(EXTRACTOR), "the extraction asking the model")
        fresh_server.stop(signal.SIGKILL)
        with pytest.raises(grpc.aio.AioRpcError):
            await call
    llm.hold.clear()
    llm.release.set()
    fresh_server.start()
    async with grpc.aio.insecure_channel(fresh_server.address) as channel:
        state = StateServiceStub(channel)
        again = await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))
    assert again.report.inserted == 1 and again.report.messages_read == 1
    assert [m for m, _, _ in _LINE.findall(llm.prompts_of(EXTRACTOR)[-1])] == [said]
    assert len(llm.requests) == 2


# --- running summary and the live query with a model -------------------------------------------

async def _summary_counts(tasks: TaskServiceStub, task_id: str, count: int) -> list[int]:
    """The message counts of the task's first `count` running summaries, each awaited as its event: a
    background job writes them, which on a busy machine takes seconds."""
    stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_RUNNING_SUMMARY_UPDATED], after_cursor=0))
    try:
        return [int((await asyncio.wait_for(stream.read(), HANG_GUARD_SECONDS)).event.payload["message_count"]) for _ in range(count)]
    finally:
        stream.cancel()


async def test_the_running_summary_follows_every_five_messages_and_feeds_query_task(llm_rpc,
                                                                                   llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks, items=3, done=1)
    for n in range(5):
        await _say(tasks, task_id, AGENT, f"Step {n} done, image v1.2.{n}")
    assert await _summary_counts(tasks, task_id, 1) == [5]
    summarized = next(p for p in llm.user_prompts if "Previous summary:" in p)
    assert "image v1.2.4" in summarized
    late = await _say(tasks, task_id, USER, "Also tag the image as latest")
    llm.answer = lambda system, user: "You finished step 0 and are on step 1; also tag latest."
    answer = await state.QueryTask(pb.QueryTaskRequest(task_id=task_id, question="where was I?"))
    assert answer.from_model and answer.answer.startswith("You finished step 0")
    assert answer.running_summary == "Steps 1-2 are done; step 3 (ENUM mapping) is in progress."
    asked = llm.prompts_of(ASKED)[-1]
    assert answer.messages_since_summary == 1 and f"[{late}] user: Also tag" in asked
    assert "Question: where was I?" in asked
    built = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=2000))
    assert built.text.startswith("## summary\nSteps 1-2 are done")


# --- budgets are guarantees, across random tasks -----------------------------------------------

_words = st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1, max_size=60)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(items=st.integers(0, 40), done=st.integers(0, 40), decisions=st.lists(_words, max_size=12),
       messages=st.lists(_words, max_size=15), budget=st.integers(1, 700))
async def test_no_rendering_is_ever_over_its_budget(server: ServerProcess, items: int, done: int,
                                                    decisions: list[str], messages: list[str], budget: int) -> None:
    async with grpc.aio.insecure_channel(server.address) as channel:
        tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
        name = ((decisions or ["t"])[0].strip() or "t")[:200]  # a blank name is INVALID_ARGUMENT
        task_id = await _task(tasks, items=items, done=min(done, items), name=name)
        for text in decisions:
            await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text.strip() or "x"))
        said = [await _say(tasks, task_id, USER, text.strip() or "x") for text in messages]
        if said:
            await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
                _candidate(ACTION, text.strip() or "x", [ref]) for text, ref in zip(messages, said)]))
        task_state = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=budget))
        rendered = await state.RenderState(pb.RenderStateRequest(task_id=task_id, token_budget=budget))
        built = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=budget))
    assert COUNTER.count(task_state.yaml) <= budget
    assert COUNTER.count(rendered.text) <= budget
    assert COUNTER.count(built.text) <= budget


async def test_messages_posted_while_a_summary_is_written_get_their_own_summary(llm_rpc, llm: ScriptedLLM) -> None:
    tasks, state = llm_rpc
    task_id = await _task(tasks)
    llm.release.clear()
    llm.hold.set()  # the first summary stalls in the model while five more messages arrive
    try:
        for n in range(5):
            await _say(tasks, task_id, AGENT, f"First batch {n}")
        await eventually(lambda: any("First batch 4" in p for p in llm.user_prompts),
                         "the first summary asking the model with the whole first batch")
        for n in range(5):
            await _say(tasks, task_id, AGENT, f"Second batch {n}")
    finally:
        llm.hold.clear()
        llm.release.set()
    assert await _summary_counts(tasks, task_id, 2) == [5, 10]
    assert "Second batch 4" in [p for p in llm.user_prompts if "Previous summary:" in p][-1]
