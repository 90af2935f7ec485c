"""Issues 26 and 38 end to end: a neighbour write is kept as an open question ("does B replace A, stand
beside it, or say the same?"), asked once in every view (task-state YAML, GetProgress, RenderState,
BuildContext) and in the write's response with the call for each answer; one AnswerQuestion call settles it
and it leaves every view."""

from __future__ import annotations

import grpc
import pytest
import yaml

from taskmem.tiktoken_offline import token_counter
from taskmem.v1 import state_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as pb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub

COUNTER = token_counter()
DECISION = state_pb2.STATE_ITEM_TYPE_DECISION
CONFLICTED = state_pb2.RECONCILE_OUTCOME_CONFLICTED
# Two near statements of one slot; an agent's (no user message behind it), so nothing certain says how
# they relate. If reconciliation's rules change which texts are asked about, change these.
HELD, RIVAL = "Use Redis for caching", "Do not use Redis for caching"


@pytest.fixture
async def rpc(channel: grpc.aio.Channel) -> tuple[TaskServiceStub, StateServiceStub]:
    return TaskServiceStub(channel), StateServiceStub(channel)


async def _conflicted_task(tasks: TaskServiceStub, state: StateServiceStub) -> tuple[str, str, str]:
    """A task with a plain decision and a pair in open conflict: (task id, held uid, rival uid)."""
    task = (await tasks.CreateTask(tpb.CreateTaskRequest(name="Cache layer", plan=[
        task_pb2.PlanItemSpec(id="build", title="Build the cache")]))).task
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task.id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text="Deploy on Fridays only")]))
    first = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task.id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=HELD)]))
    second = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task.id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=RIVAL)]))
    result = second.report.results[0]
    assert (result.outcome, result.target_uid) == (CONFLICTED, first.items[0].uid), result
    return task.id, first.items[0].uid, result.uid


def _asks(text: str, held: str, rival: str) -> bool:
    """The text asks the question, naming both statements with their uids (the newer as B)."""
    return f"does [{rival}] {RIVAL} replace [{held}] {HELD}, stand beside it, or say the same?" in text


async def test_an_open_conflict_is_one_question_in_every_view(rpc) -> None:
    tasks, state = rpc
    task_id, held, rival = await _conflicted_task(tasks, state)

    task_state = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    data = yaml.safe_load(task_state.yaml)
    assert [c["uids"] for c in data["open_conflicts"]] == [[held, rival]]
    assert _asks(data["open_conflicts"][0]["question"], held, rival)
    assert data["decisions_log"] == ["Deploy on Fridays only"]
    assert task_state.yaml.count("AnswerQuestion") == 1  # how to answer it, once
    typed = task_state.state
    assert [[n.uid for n in c.items] for c in typed.open_conflicts] == [[held, rival]]
    assert [d.text for d in typed.decisions] == ["Deploy on Fridays only"]

    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [c.question for c in progress.open_conflicts] == [data["open_conflicts"][0]["question"]]
    assert [n.text for n in progress.open_conflicts[0].items] == [HELD, RIVAL]
    assert [n.text for n in progress.decisions] == ["Deploy on Fridays only"]
    assert _asks(progress.summary, held, rival) and progress.summary.count(RIVAL) == 1

    rendered = await state.RenderState(pb.RenderStateRequest(task_id=task_id))
    lines = rendered.text.splitlines()
    assert lines[1].startswith("QUESTION DECISION ") and _asks(lines[1], held, rival)
    assert len(lines) == 3 and "Deploy on Fridays only" in lines[2]
    assert (rendered.items_rendered, rendered.items_omitted) == (3, 0)

    built = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=4000))
    state_section = built.text.split("## state\n", 1)[1]
    assert _asks(state_section, held, rival) and state_section.count(RIVAL) == 1
    assert _asks(built.text.split("## summary\n", 1)[1], held, rival)  # the task-state YAML


async def test_tight_budgets_are_kept_with_an_open_conflict(rpc) -> None:
    tasks, state = rpc
    task_id, _, _ = await _conflicted_task(tasks, state)
    for budget in (5, 20, 40, 60, 90, 120):
        task_state = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id, token_budget=budget))
        assert COUNTER.count(task_state.yaml) <= budget
        rendered = await state.RenderState(pb.RenderStateRequest(task_id=task_id, token_budget=budget))
        assert COUNTER.count(rendered.text) <= budget
        assert rendered.items_rendered + rendered.items_omitted == 3
        built = await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=budget * 4))
        assert COUNTER.count(built.text) <= budget * 4


def _settles(result: state_pb2.CandidateResult) -> bool:
    """The write's response asks the question and names the call for each answer."""
    call = f"AnswerQuestion(new_uid: {result.uid}, old_uid: {result.target_uid}, answer:"
    return (result.outcome == CONFLICTED and "stand beside it, or say the same?" in result.settle_with
            and all(f"{call} {answer})" in result.settle_with for answer in ("REPLACES", "STANDS_BESIDE", "SAME")))


async def test_each_write_names_the_rival_and_the_calls_that_settle_it(rpc) -> None:
    tasks, state = rpc
    task_id, held, rival = await _conflicted_task(tasks, state)
    upserted = await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text="Do not deploy on Fridays")]))
    assert _settles(upserted.report.results[0])
    # A decision that names what it replaces is certain: there is nothing to ask.
    await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Use Postgres for storage"))
    decided = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id,
                                                            text="Use SQLite for storage instead of Postgres"))
    assert decided.report.results[0].outcome == state_pb2.RECONCILE_OUTCOME_SUPERSEDED
    assert decided.report.results[0].settle_with == ""
    await state.AddError(pb.AddErrorRequest(task_id=task_id, error="Port 8080 is free"))
    error = await state.AddError(pb.AddErrorRequest(task_id=task_id, error="Port 8080 is not free"))
    assert _settles(error.report.results[0]) and error.report.results[0].uid == error.item.uid
    plain = await state.AddDecision(pb.AddDecisionRequest(task_id=task_id, text="Log in JSON"))
    assert plain.report.results[0].settle_with == ""
    # Every one of them is a question in the views, none a plain item.
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert len(progress.open_conflicts) == 3
    assert [n.text for n in progress.decisions] == ["Use SQLite for storage instead of Postgres", "Log in JSON"]


async def test_retiring_one_side_settles_the_conflict_and_the_other_is_plain_again(rpc) -> None:
    tasks, state = rpc
    task_id, held, rival = await _conflicted_task(tasks, state)
    await state.SetStateItemStatus(pb.SetStateItemStatusRequest(
        task_id=task_id, uid=rival, status=state_pb2.STATE_ITEM_STATUS_SUPERSEDED))

    kept = (await state.ExpandStateItem(pb.ExpandStateItemRequest(task_id=task_id, uid=held))).item
    assert (kept.conflict, list(kept.conflict_with)) == (False, [])
    task_state = await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))
    data = yaml.safe_load(task_state.yaml)
    assert "open_conflicts" not in data and not task_state.state.open_conflicts
    assert data["decisions_log"] == ["Deploy on Fridays only", HELD]
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert not progress.open_conflicts and "stand beside it" not in progress.summary
    assert [(n.text, n.conflict) for n in progress.decisions] == [("Deploy on Fridays only", False), (HELD, False)]
    rendered = (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text
    assert "QUESTION DECISION" not in rendered and RIVAL not in rendered and f"[{held}] DECISION (active)" in rendered
    built = (await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=4000))).text
    assert "stand beside it" not in built and RIVAL not in built


async def test_a_conflict_settled_by_a_later_supersedes_leaves_the_views(rpc) -> None:
    tasks, state = rpc
    task_id, held, rival = await _conflicted_task(tasks, state)
    await state.UpsertStateItems(pb.UpsertStateItemsRequest(task_id=task_id, items=[
        state_pb2.StateItemCandidate(type=DECISION, text=HELD, supersedes=rival)]))
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert not progress.open_conflicts and [n.text for n in progress.decisions][-1] == HELD
    rendered = (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text
    assert "QUESTION DECISION" not in rendered and RIVAL not in rendered
    assert "open_conflicts" not in (await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml
    # The survivor's stored flag is cleared too, so ListStateItems and ExpandStateItem agree with the views.
    kept = (await state.ExpandStateItem(pb.ExpandStateItemRequest(task_id=task_id, uid=held))).item
    assert (kept.conflict, list(kept.conflict_with)) == (False, [])


async def _views(tasks: TaskServiceStub, state: StateServiceStub, task_id: str) -> dict[str, str]:
    """Every view's text: the task-state YAML, GetProgress (its summary and questions), RenderState, BuildContext."""
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    return {
        "yaml": (await state.GetTaskState(pb.GetTaskStateRequest(task_id=task_id))).yaml,
        "progress": progress.summary + "\n".join(c.question for c in progress.open_conflicts),
        "render": (await state.RenderState(pb.RenderStateRequest(task_id=task_id))).text,
        "context": (await state.BuildContext(pb.BuildContextRequest(task_id=task_id, token_budget=4000))).text,
    }


@pytest.mark.parametrize(("answer", "current", "retired"), [
    (pb.QUESTION_ANSWER_REPLACES, [RIVAL], [HELD]),
    (pb.QUESTION_ANSWER_STANDS_BESIDE, [HELD, RIVAL], []),
    (pb.QUESTION_ANSWER_SAME, [HELD], [RIVAL]),
])
async def test_one_answer_question_call_settles_it_and_it_leaves_every_view(
        rpc, answer: int, current: list[str], retired: list[str]) -> None:
    tasks, state = rpc
    task_id, held, rival = await _conflicted_task(tasks, state)
    assert all(_asks(text, held, rival) for text in (await _views(tasks, state, task_id)).values())
    answered = await state.AnswerQuestion(pb.AnswerQuestionRequest(
        task_id=task_id, new_uid=rival, old_uid=held, answer=answer, answered_by="agent"))
    assert [i.uid for i in answered.items][:2] == [rival, held]
    for name, text in (await _views(tasks, state, task_id)).items():
        assert "stand beside it" not in text, name
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id))
    assert [n.text for n in progress.decisions] == ["Deploy on Fridays only", *current]
    items = {i.text: i for i in (await state.ListStateItems(pb.ListStateItemsRequest(
        task_id=task_id, include_superseded=True))).items}
    for text in retired:
        assert items[text].status == state_pb2.STATE_ITEM_STATUS_SUPERSEDED
        assert items[text].supersession_evidence.matched_by == "answered by agent"
    with pytest.raises(grpc.aio.AioRpcError) as again:  # answered: it is no longer a question
        await state.AnswerQuestion(pb.AnswerQuestionRequest(task_id=task_id, new_uid=rival, old_uid=held,
                                                            answer=answer))
    assert again.value.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.NOT_FOUND)


@pytest.mark.parametrize(("fields", "named"), [
    ({"new_uid": "", "old_uid": "d_1", "answer": 1}, "new_uid"), ({"new_uid": "d_1", "old_uid": "", "answer": 1}, "old_uid"),
    ({"new_uid": "d_1", "old_uid": "d_2", "answer": 0}, "answer"), ({"new_uid": "d_1", "old_uid": "d_2", "answer": 9}, "answer"),
    ({"new_uid": "d_1", "old_uid": "d_1", "answer": 1}, "old_uid"),
])
async def test_a_bad_answer_is_invalid_argument_naming_the_field(rpc, fields: dict, named: str) -> None:
    tasks, state = rpc
    task_id, _, _ = await _conflicted_task(tasks, state)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await state.AnswerQuestion(pb.AnswerQuestionRequest(task_id=task_id, **fields))
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT and named in error.value.details()
