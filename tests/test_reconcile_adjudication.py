"""A configured model judges the decisions the policy marks uncertain, end to end: real servers on loopback with the builtin
embedder, one with no model and one with a scripted OpenAI-compatible model (1 s adjudication limit).

The pair used throughout: "Store session data in Redis" then "Keep the session cache in Redis" (MiniLM
cosine 0.81): the rules merge it as a duplicate on similarity alone, so the policy marks it uncertain."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest

from taskmem.v1 import event_pb2, state_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess

DECISION = state_pb2.STATE_ITEM_TYPE_DECISION
MERGED, SUPERSEDED_OUTCOME, CONFLICTED = (state_pb2.RECONCILE_OUTCOME_MERGED, state_pb2.RECONCILE_OUTCOME_SUPERSEDED,
                                          state_pb2.RECONCILE_OUTCOME_CONFLICTED)
OLD, NEW = "Store session data in Redis", "Keep the session cache in Redis"
UNRELATED = "Plan the quarterly offsite agenda"
_QUESTIONS = re.compile(r"^Questions:\n(\[.*\])$", re.DOTALL)


def questions(llm: ScriptedLLM) -> list[dict[str, object]]:
    """Every adjudication question the model was sent, in order."""
    asked = []
    for request in llm.requests:
        system, user = request["messages"][0]["content"], request["messages"][1]["content"]
        if system.startswith("You adjudicate"):
            match = _QUESTIONS.match(user)
            assert match, user
            asked.extend(json.loads(match.group(1)))
    return asked


def answering(outcome: str, reason: str = "") -> object:
    """A model answering every question with `outcome` about the existing item it was shown."""
    def answer(system: str, user: str) -> str:
        asked = json.loads(_QUESTIONS.match(user).group(1))  # type: ignore[union-attr]
        return json.dumps([{"id": q["id"], "outcome": outcome,
                            "target": None if outcome == "insert" else q["existing"]["uid"], "reason": reason}
                           for q in asked])
    return answer


def judged_env(llm: ScriptedLLM) -> dict[str, str]:
    """A server's settings for the scripted model as its judge: no retries, a 1 s adjudication limit."""
    return {"TASKMEM_LLM_BASE_URL": llm.base_url, "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0",
            "TASKMEM_RECONCILE_ADJUDICATION_TIMEOUT_SECONDS": "1"}


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with scripted_llm() as model:
        yield model


@pytest.fixture(scope="module")
def judged_server(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLM) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("adjudicated") / "taskmem.db", env=judged_env(llm))
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def judged(judged_server: ServerProcess,
                 llm: ScriptedLLM) -> AsyncIterator[tuple[TaskServiceStub, StateServiceStub]]:
    llm.answer = answering("merge")
    llm.requests.clear()
    llm.hold.clear()
    async with grpc.aio.insecure_channel(judged_server.address) as channel:
        yield TaskServiceStub(channel), StateServiceStub(channel)


@pytest.fixture
async def plain(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub]:
    """The shared server: no model configured."""
    return TaskServiceStub(channel), StateServiceStub(channel)


async def _task(tasks: TaskServiceStub) -> str:
    return (await tasks.CreateTask(tpb.CreateTaskRequest(name="Sessions", goal="Pick a session store"))).task.id


async def _upsert(state: StateServiceStub, task_id: str, text: str, **fields: object) -> pb.UpsertStateItemsResponse:
    return await state.UpsertStateItems(pb.UpsertStateItemsRequest(
        task_id=task_id, items=[state_pb2.StateItemCandidate(type=DECISION, text=text, **fields)]))


async def _items(state: StateServiceStub, task_id: str) -> dict[str, state_pb2.StateItem]:
    listed = await state.ListStateItems(pb.ListStateItemsRequest(task_id=task_id, include_superseded=True))
    return {item.text: item for item in listed.items}


async def test_with_no_model_configured_the_outcome_is_the_builtin_one(plain) -> None:
    tasks, state = plain
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    result = (await _upsert(state, task_id, NEW)).report.results[0]
    assert (result.outcome, result.target_uid) == (MERGED, old.uid)
    assert result.reason.startswith("duplicate (score 0.8") and "adjudicat" not in result.reason


async def test_an_in_band_upsert_gets_the_models_outcome_and_its_evidence(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    llm.answer = answering("conflict", "a cache is not the session store")
    result = (await _upsert(state, task_id, NEW)).report.results[0]
    assert (result.outcome, result.target_uid) == (CONFLICTED, old.uid)
    assert result.reason.startswith("adjudicated: scripted answered conflict (builtin merge, duplicate): "
                                    "a cache is not the session store")
    assert questions(llm) == [{"id": 0, "type": "decision", "candidate": NEW,
                               "existing": {"uid": old.uid, "text": OLD}}]
    items = await _items(state, task_id)
    assert items[OLD].conflict and list(items[OLD].conflict_with) == [result.uid]
    assert items[NEW].conflict and list(items[NEW].conflict_with) == [old.uid]
    events = (await tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_STATE_ITEMS_UPSERTED]))).events
    record = events[-1].payload["results"][0]["adjudication"]
    assert (record["model"], record["answer"], record["applied"], record["builtin"]["outcome"]) == (
        "scripted", "conflict", True, "merge")
    assert record["uncertain"].startswith("merged on similarity alone")


async def test_a_batch_asks_all_its_uncertain_candidates_in_one_call(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    report_old, report_new = "Send the weekly report to finance", "Email finance the weekly summary report"  # 0.84
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=text) for text in (OLD, report_old)]))
    llm.answer = answering("insert", "not the same item")
    report = (await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=text) for text in (NEW, report_new)]))).report
    assert len(llm.requests) == 1 and [q["candidate"] for q in questions(llm)] == [NEW, report_new]
    assert [r.outcome for r in report.results] == [state_pb2.RECONCILE_OUTCOME_INSERTED] * 2
    assert all(r.reason.startswith("adjudicated: scripted answered insert (builtin merge") for r in report.results)


async def test_add_decision_goes_through_adjudication_and_a_supersede_names_the_model(judged, llm) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    first = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=OLD))
    llm.answer = answering("supersede", "the cache replaces the store")
    second = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=NEW))
    result = second.report.results[-1]
    assert (result.outcome, result.target_uid) == (SUPERSEDED_OUTCOME, first.item.uid)
    old = (await _items(state, task_id))[OLD]
    assert old.status == state_pb2.STATE_ITEM_STATUS_SUPERSEDED and old.replaced_by == second.item.uid
    assert old.supersession_evidence.matched_by == "adjudicated by scripted; stated by the caller"
    assert [q["candidate"] for q in questions(llm)] == [NEW]


async def test_extract_state_goes_through_adjudication_too(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    said = (await tasks.PostMessage(tpb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER, content=NEW))).message.id
    judge = answering("conflict", "not the same store")

    def answer(system: str, user: str) -> str:
        if system.startswith("You adjudicate"):
            return judge(system, user)  # type: ignore[operator]
        return json.dumps([{"type_tag": "decision", "text": NEW, "refs": [said]}])
    llm.answer = answer
    result = (await state.ExtractState(pb.ExtractStateRequest(task_id=task_id))).report.results[0]
    assert (result.outcome, result.target_uid) == (CONFLICTED, old.uid)
    assert result.reason.startswith("adjudicated: scripted answered conflict (builtin merge, duplicate)")
    assert len(llm.requests) == 2 and [q["candidate"] for q in questions(llm)] == [NEW]


async def test_an_answer_that_agrees_keeps_the_rule_and_says_so(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    result = (await _upsert(state, task_id, NEW)).report.results[0]
    assert (result.outcome, result.target_uid) == (MERGED, old.uid)
    assert result.reason.startswith("duplicate (score 0.8") and result.reason.endswith("; scripted agreed")


async def test_out_of_band_pairs_make_no_model_call(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    await _upsert(state, task_id, OLD)
    same = (await _upsert(state, task_id, OLD)).report.results[0]  # the same text: merged by uid
    far = (await _upsert(state, task_id, UNRELATED)).report.results[0]  # nothing near: inserted
    assert (same.outcome, far.outcome) == (MERGED, state_pb2.RECONCILE_OUTCOME_INSERTED)
    assert llm.requests == []


async def test_an_explicit_supersedes_is_never_sent_to_the_model(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    result = (await _upsert(state, task_id, NEW, supersedes=old.uid)).report.results[0]
    assert (result.outcome, result.target_uid) == (SUPERSEDED_OUTCOME, old.uid)
    assert result.reason.startswith("explicit_supersedes") and llm.requests == []


def _failing(system: str, user: str) -> str:
    raise RuntimeError("the scripted model is down")  # the connection closes with no answer


@pytest.mark.parametrize("failure, kept", [
    ("error", "no answer: "),
    ("garbage", "no answer: the model's answer is not a JSON array"),
    ("unknown outcome", "unknown outcome 'probably'"),
    ("timeout", "no answer: "),
])
async def test_a_model_that_fails_or_answers_garbage_keeps_the_builtin_outcome(judged, llm, failure, kept) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    llm.answer = {"error": _failing, "garbage": lambda system, user: "I would merge them, I think.",
                  "unknown outcome": answering("probably"), "timeout": answering("conflict")}[failure]
    if failure == "timeout":
        llm.release.clear()
        llm.hold.set()
    try:
        result = (await _upsert(state, task_id, NEW)).report.results[0]
    finally:
        llm.hold.clear()
        llm.release.set()
    assert (result.outcome, result.target_uid) == (MERGED, old.uid)
    assert result.reason.startswith("duplicate (score 0.8")
    assert f"scripted's answer not applied: {kept}" in result.reason
    assert len(questions(llm)) == 1
    items = await _items(state, task_id)
    assert not items[OLD].conflict and NEW not in items


async def test_statements_adopted_at_start_up_keep_the_builtin_outcome_and_ask_no_model(
        tmp_path, llm: ScriptedLLM) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env=judged_env(llm))
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
            task_id = await _task(tasks)
            for text in (OLD, NEW):
                await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=text))
        server.stop()
        # A database from before issue 11: the decisions' memory entries, and no state item for them.
        server.sql("DELETE FROM state_items")
        server.sql("DELETE FROM state_item_entries")
        llm.answer = answering("conflict")
        llm.requests.clear()
        server.start()
        async with grpc.aio.insecure_channel(server.address) as channel:
            items = await _items(StateServiceStub(channel), task_id)
        assert questions(llm) == []
        assert not items[OLD].conflict and NEW not in items  # the builtin merge: one item, no conflict
    finally:
        server.stop()


async def test_the_adjudication_call_counts_in_the_tasks_model_usage(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    await _upsert(state, task_id, OLD)
    llm.usage = (40, 8)
    try:
        await _upsert(state, task_id, NEW)
    finally:
        llm.usage = None
    usage = await tasks.GetTaskUsage(tpb.GetTaskUsageRequest(task_id=task_id))
    assert [(line.model, line.purpose, line.calls, line.tokens_in, line.tokens_out) for line in usage.model_usage] \
        == [("scripted", task_pb2.MODEL_CALL_PURPOSE_ADJUDICATION, 1, 40, 8)]
