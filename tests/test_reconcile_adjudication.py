"""A configured model answers reconciliation's open questions first, end to end: real servers on loopback with the
builtin embedder, one with no model and one with a scripted OpenAI-compatible model (1 s adjudication limit).

The pair used throughout: "Store session data in Redis" then "Keep the session cache in Redis" (MiniLM cosine
0.81): near, in other words, nothing certain relates them, so the policy keeps it as an open question. The model
is shown what the policy saw: both texts, who said B and the user's message behind it."""

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
INSERTED = state_pb2.RECONCILE_OUTCOME_INSERTED
MERGED, SUPERSEDED_OUTCOME, CONFLICTED = (state_pb2.RECONCILE_OUTCOME_MERGED, state_pb2.RECONCILE_OUTCOME_SUPERSEDED,
                                          state_pb2.RECONCILE_OUTCOME_CONFLICTED)
OLD, NEW = "Store session data in Redis", "Keep the session cache in Redis"
UNRELATED = "Plan the quarterly offsite agenda"
WORDS = "Redis is only a cache for us now; keep the session cache there."
_QUESTIONS = re.compile(r"^Questions:\n(\[.*\])$", re.DOTALL)


def questions(llm: ScriptedLLM) -> list[dict[str, object]]:
    """Every adjudication question the model was sent, in order."""
    asked = []
    for request in llm.requests:
        system, user = request["messages"][0]["content"], request["messages"][1]["content"]
        if system.startswith("You settle open questions"):
            match = _QUESTIONS.match(user)
            assert match, user
            asked.extend(json.loads(match.group(1)))
    return asked


def answering(word: str, reason: str = "") -> object:
    """A model answering every question with `word` (replaces, stands_beside, same, unsure)."""
    def answer(system: str, user: str) -> str:
        asked = json.loads(_QUESTIONS.match(user).group(1))  # type: ignore[union-attr]
        return json.dumps([{"id": q["id"], "answer": word, "reason": reason} for q in asked])
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
    llm.answer = answering("unsure")
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


async def test_with_no_model_configured_the_pair_stays_an_open_question(plain) -> None:
    tasks, state = plain
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    result = (await _upsert(state, task_id, NEW)).report.results[0]
    assert (result.outcome, result.target_uid) == (CONFLICTED, old.uid)
    assert result.reason.startswith("near: does [") and "AnswerQuestion" in result.settle_with


async def test_the_model_sees_both_texts_who_said_it_and_the_users_message_and_its_answer_applies(
        judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    said = (await tasks.PostMessage(tpb.PostMessageRequest(
        task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER, content=WORDS))).message.id
    llm.answer = answering("replaces", "the user moved sessions to the cache")
    result = (await _upsert(state, task_id, NEW, refs=[said])).report.results[0]
    assert questions(llm) == [{"id": 0, "type": "decision", "A": OLD, "B": NEW, "said_by": "user", "message": WORDS}]
    assert (result.outcome, result.target_uid) == (SUPERSEDED_OUTCOME, old.uid)
    assert result.reason.startswith("adjudicated: scripted answered replaces: the user moved sessions")
    items = await _items(state, task_id)
    assert items[OLD].status == state_pb2.STATE_ITEM_STATUS_SUPERSEDED and items[OLD].replaced_by == result.uid
    assert items[OLD].supersession_evidence.matched_by == "answered by scripted"
    assert not items[NEW].conflict
    events = (await tasks.ListEvents(tpb.ListEventsRequest(
        task_ids=[task_id], types=[event_pb2.EVENT_TYPE_STATE_ITEMS_UPSERTED]))).events
    record = events[-1].payload["results"][0]["adjudication"]
    assert (record["model"], record["answer"], record["applied"]) == ("scripted", "replaces", True)
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert not progress.open_conflicts and [n.text for n in progress.decisions] == [NEW]


@pytest.mark.parametrize(("role", "said_by"), [(task_pb2.MESSAGE_ROLE_AGENT, "agent"),
                                               (task_pb2.MESSAGE_ROLE_TOOL, "tool"),
                                               (task_pb2.MESSAGE_ROLE_SYSTEM, "document")])
async def test_who_said_the_candidate_is_shown_and_stands_beside_keeps_both_plain(
        judged, llm: ScriptedLLM, role: int, said_by: str) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    await _upsert(state, task_id, OLD)
    said = (await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=role, content="found: " + NEW)))
    llm.answer = answering("stands_beside")
    result = (await _upsert(state, task_id, NEW, refs=[said.message.id])).report.results[0]
    assert [(q["said_by"], q["message"]) for q in questions(llm)] == [(said_by, "found: " + NEW)]
    assert result.outcome == INSERTED
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert not progress.open_conflicts and [n.text for n in progress.decisions] == [OLD, NEW]


async def test_a_batch_asks_all_its_open_questions_in_one_call(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    report_old, report_new = "Send the weekly report to finance", "Email finance the weekly summary report"  # 0.84
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=text) for text in (OLD, report_old)]))
    llm.answer = answering("same", "a restatement")
    report = (await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=text) for text in (NEW, report_new)]))).report
    assert len(llm.requests) == 1 and [q["B"] for q in questions(llm)] == [NEW, report_new]
    assert [r.outcome for r in report.results] == [MERGED] * 2


async def test_add_decision_and_extract_state_go_through_the_model_too(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    first = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=OLD))
    llm.answer = answering("same")
    second = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text=NEW))
    assert (second.report.results[-1].outcome, second.item.uid) == (MERGED, first.item.uid)
    other = await _task(tasks)
    old = (await _upsert(state, other, OLD)).items[0]
    said = (await tasks.PostMessage(tpb.PostMessageRequest(
        task_id=other, role=task_pb2.MESSAGE_ROLE_USER, content=WORDS))).message.id
    judge = answering("replaces")

    def answer(system: str, user: str) -> str:
        if system.startswith("You settle open questions"):
            return judge(system, user)  # type: ignore[operator]
        return json.dumps([{"type_tag": "decision", "text": NEW, "refs": [said]}])
    llm.answer = answer
    llm.requests.clear()
    result = (await state.ExtractState(pb.ExtractStateRequest(task_id=other))).report.results[0]
    assert (result.outcome, result.target_uid) == (SUPERSEDED_OUTCOME, old.uid)
    assert [(q["B"], q["said_by"], q["message"]) for q in questions(llm)] == [(NEW, "user", WORDS)]


async def test_certain_and_far_pairs_make_no_model_call(judged, llm: ScriptedLLM) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    same = (await _upsert(state, task_id, OLD)).report.results[0]  # the same text: merged by uid
    far = (await _upsert(state, task_id, UNRELATED)).report.results[0]  # nothing near: inserted
    named = (await _upsert(state, task_id, NEW, supersedes=old.uid)).report.results[0]
    assert (same.outcome, far.outcome, named.outcome) == (MERGED, INSERTED, SUPERSEDED_OUTCOME)
    assert named.reason.startswith("explicit_supersedes") and llm.requests == []


def _failing(system: str, user: str) -> str:
    raise RuntimeError("the scripted model is down")  # the connection closes with no answer


@pytest.mark.parametrize("failure", ["error", "garbage", "unsure", "unknown word", "timeout"])
async def test_a_model_that_fails_or_cannot_tell_leaves_the_question_open(judged, llm, failure) -> None:
    tasks, state = judged
    task_id = await _task(tasks)
    old = (await _upsert(state, task_id, OLD)).items[0]
    llm.answer = {"error": _failing, "garbage": lambda system, user: "I cannot tell, I think.",
                  "unsure": answering("unsure"), "unknown word": answering("probably"),
                  "timeout": answering("replaces")}[failure]
    if failure == "timeout":
        llm.release.clear()
        llm.hold.set()
    try:
        result = (await _upsert(state, task_id, NEW)).report.results[0]
    finally:
        llm.hold.clear()
        llm.release.set()
    assert (result.outcome, result.target_uid) == (CONFLICTED, old.uid)
    assert "scripted did not settle it" in result.reason and "AnswerQuestion" in result.settle_with
    assert len(questions(llm)) == 1
    items = await _items(state, task_id)
    assert items[OLD].conflict and items[NEW].conflict


async def test_statements_adopted_at_start_up_ask_no_model(tmp_path, llm: ScriptedLLM) -> None:
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
        llm.answer = answering("replaces")
        llm.requests.clear()
        server.start()
        async with grpc.aio.insecure_channel(server.address) as channel:
            items = await _items(StateServiceStub(channel), task_id)
        assert questions(llm) == []
        assert items[OLD].conflict and items[NEW].conflict  # the policy alone: an open question
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
