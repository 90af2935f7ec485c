""""May be finished" questions in core: the question on an item, how the views show it, when it ends, and the
model's question about it and the reading of its answer."""

from __future__ import annotations

import pytest
import yaml

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.plan_judge import JUDGE_SYSTEM, StepAsked, Verdict, judge_prompt, parse_judgement
from taskmem.core.plans import ItemStatus, Plan, PlanItem, StepQuestion, carry_over, set_item_status
from taskmem.core.progress import compute_progress
from taskmem.core.task_state_yaml import WorkspaceChanges, build_task_state, fit_task_state, render_task_state_yaml
from taskmem.core.tasks import Task, TaskStatus
from taskmem.tiktoken_offline import token_counter

TASK = Task(namespace="default", id="tsk_1", name="press", status=TaskStatus.EXECUTING, created_at=0, updated_at=0)
ASKED = StepQuestion("msg_9", "lacquers are cut", "the step's words are only partly said")


def pressing(question: StepQuestion | None = ASKED) -> Plan:
    return Plan("tsk_1", 1, [PlanItem(id="lacquers", ordinal=0, title="Get the lacquers cut", question=question),
                             PlanItem(id="sleeve", ordinal=1, title="Send the sleeve artwork")], 0)


def test_the_question_names_the_step_its_number_and_the_message() -> None:
    item = pressing().items[0]
    assert ASKED.text(item) == "may be finished: step 1 'Get the lacquers cut' (message msg_9)"


def test_get_progress_lists_the_question_and_its_summary_asks_it_without_counting_the_step_done() -> None:
    progress = compute_progress(TASK, pressing(), None, [])
    assert [i.id for i in progress.asked] == ["lacquers"] and progress.completed == []
    assert "Completed 0/2" in progress.summary
    assert "May be finished (answer with UpdatePlanItem" in progress.summary
    assert "step 1 'Get the lacquers cut' (message msg_9)" in progress.summary


def test_the_yaml_lists_the_question_with_how_to_answer_it() -> None:
    text = render_task_state_yaml(build_task_state(TASK, pressing(), [], [], None))
    parsed = yaml.safe_load(text)
    assert parsed["may_be_finished"] == [{"subtask": "lacquers", "question": ASKED.text(pressing().items[0]),
                                          "evidence": "lacquers are cut"}]
    assert "# answer with UpdatePlanItem: status COMPLETED" in text


def test_a_plan_with_no_question_shows_none_anywhere() -> None:
    assert "may_be_finished" not in render_task_state_yaml(build_task_state(TASK, pressing(None), [], [], None))
    assert "May be finished" not in compute_progress(TASK, pressing(None), None, []).summary


def test_a_tight_budget_drops_the_hint_and_the_evidence_before_the_question() -> None:
    counter = token_counter()
    view = build_task_state(TASK, pressing(), [], [], WorkspaceChanges(1, 2, 3))
    budget = counter.count(fit_task_state(view, counter, 10_000)[0])
    omitted: list[str] = []
    while "1 × evidence of may-be-finished questions" not in omitted and budget > 0:
        budget -= 1
        text, _, omitted = fit_task_state(view, counter, budget)
    assert omitted.index("how to answer a may-be-finished question") < omitted.index(
        "1 × evidence of may-be-finished questions")
    assert "may_be_finished:" in text and "evidence:" not in text


def test_a_status_change_ends_the_question_and_the_same_status_keeps_it() -> None:
    item = pressing().items[0]
    set_item_status(item, ItemStatus.PENDING, 1)
    assert item.question == ASKED
    set_item_status(item, ItemStatus.IN_PROGRESS, 2)
    assert item.question is None


def test_a_replanned_item_keeps_its_question() -> None:
    [kept] = carry_over(pressing(), [PlanItem(id="lacquers", ordinal=0, title="Get the lacquers cut")])
    assert kept.question == ASKED


def asked() -> StepAsked:
    return StepAsked(0, "Get the lacquers cut", ("Get the lacquers cut", "Send the sleeve artwork"),
                     "lacquers are cut! side B runs hot", "user", "lacquers are cut", "the step's words are only partly said")


def test_the_model_is_asked_with_the_plan_the_step_the_message_and_who_said_it() -> None:
    prompt = judge_prompt(asked())
    assert "1. Get the lacquers cut\n2. Send the sleeve artwork" in prompt
    assert 'said by the user:\n"lacquers are cut! side B runs hot"' in prompt
    assert "step 1, \"Get the lacquers cut\", is finished?" in prompt and "partly said" in prompt
    assert '"finished" | "not_finished" | "unsure"' in JUDGE_SYSTEM


@pytest.mark.parametrize("reply, verdict", [
    ('{"answer": "finished", "reason": "cut is the outcome"}', Verdict.FINISHED),
    ('```json\n{"answer": "not finished"}\n```', Verdict.NOT_FINISHED),
    ('Here you go: {"answer": "UNSURE", "reason": ""}', Verdict.UNSURE),
])
def test_the_models_answer_is_read_from_the_json_object_in_its_reply(reply: str, verdict: Verdict) -> None:
    assert parse_judgement(reply).verdict is verdict


@pytest.mark.parametrize("reply", ["", "finished", '{"answer": "maybe"}', "[]", '{"answer": '])
def test_a_reply_with_no_known_answer_is_refused_and_the_question_stays(reply: str) -> None:
    with pytest.raises(ModelOutputInvalid):
        parse_judgement(reply)
