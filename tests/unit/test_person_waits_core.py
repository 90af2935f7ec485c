"""Waits on a person in core, with no I/O: which status a task or item waits in and returns to, the history
messages, the status machine's new moves, and how GetProgress's summary and the task-state YAML say who must
answer what."""

from __future__ import annotations

import pytest
import yaml

from taskmem.core.errors import FailedPrecondition
from taskmem.core.messages import Role
from taskmem.core.person_waits import (
    answer_message, item_resume_status, item_status_while, question_message, task_resume_status, task_status_while,
)
from taskmem.core.plans import ItemStatus, PlanItem
from taskmem.core.progress import render_state_lines
from taskmem.core.state_notes import StateNotes, WaitNote
from taskmem.core.task_state_yaml import build_task_state, render_task_state_yaml
from taskmem.core.tasks import Task, TaskStatus, allowed_transitions
from taskmem.core.waits import (
    ExternalKind, ExternalTarget, TaskStatusTarget, TimerTarget, Wait, WaitStatus, describe_target, task_status_outcome,
    target_from_json, target_to_json,
)

INPUT, AUTH = ExternalKind.INPUT, ExternalKind.AUTH


def _task(status: TaskStatus) -> Task:
    return Task(namespace="default", id="tsk_1", name="deploy", status=status, created_at=0, updated_at=0)


def _wait(kind: ExternalKind, question: str = "Which region?", *, resume: str = "", item: str = "",
          status: WaitStatus = WaitStatus.WAITING, result: str = "") -> Wait:
    target = ExternalTarget("alex", kind, question, item, resume)
    return Wait(namespace="default", id="wai_1", criteria=describe_target(target), target=target, created_at=1,
                correlation_id="c", task_id="tsk_1", status=status, result=result)


@pytest.mark.parametrize("status", [TaskStatus.PENDING, TaskStatus.PLANNING, TaskStatus.EXECUTING,
                                    TaskStatus.SYNTHESIZING])
def test_a_working_task_returns_to_the_status_it_had(status: TaskStatus) -> None:
    assert task_resume_status(_task(status), []) is status


def test_a_task_already_waiting_returns_to_the_status_the_open_waits_keep() -> None:
    kept = _wait(INPUT, resume=TaskStatus.SYNTHESIZING.value)
    assert task_resume_status(_task(TaskStatus.INPUT_REQUIRED), [kept]) is TaskStatus.SYNTHESIZING


@pytest.mark.parametrize("status", [TaskStatus.PAUSED, TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED,
                                    TaskStatus.ARCHIVED])
def test_a_task_that_is_not_working_cannot_wait_on_a_person(status: TaskStatus) -> None:
    with pytest.raises(FailedPrecondition, match=status.name):
        task_resume_status(_task(status), [])


def test_an_authorisation_outranks_an_answer() -> None:
    assert task_status_while([INPUT]) is TaskStatus.INPUT_REQUIRED
    assert task_status_while([INPUT, AUTH, INPUT]) is TaskStatus.AUTH_REQUIRED
    assert item_status_while([AUTH]) is ItemStatus.AUTH_REQUIRED and item_status_while([INPUT]) is ItemStatus.INPUT_REQUIRED


def test_a_held_item_returns_to_pending_and_an_unheld_one_to_its_status() -> None:
    working = PlanItem(id="build", ordinal=0, title="Build", status=ItemStatus.IN_PROGRESS)
    assert item_resume_status(working, True, []) is ItemStatus.PENDING
    assert item_resume_status(working, False, []) is ItemStatus.IN_PROGRESS
    blocked = PlanItem(id="build", ordinal=0, title="Build", status=ItemStatus.BLOCKED)
    assert item_resume_status(blocked, False, []) is ItemStatus.BLOCKED
    for done in (ItemStatus.COMPLETED, ItemStatus.SKIPPED, ItemStatus.FAILED):
        with pytest.raises(FailedPrecondition):
            item_resume_status(PlanItem(id="build", ordinal=0, title="Build", status=done), False, [])


def test_the_question_is_the_agents_message_and_the_answer_the_persons() -> None:
    role, text = question_message(_wait(INPUT, item="deploy"))
    assert role is Role.AGENT
    assert text == "[Input required] [plan item deploy] Which region? (asked of alex; answer with ResolveWait wai_1)"
    assert answer_message(_wait(AUTH, status=WaitStatus.RESOLVED, result="signed in")) == (
        Role.USER, "[Auth received] signed in")
    assert answer_message(_wait(INPUT, status=WaitStatus.FAILED, result="no")) == (Role.USER, "[Input refused] no")
    assert answer_message(_wait(INPUT, status=WaitStatus.TIMED_OUT, result="no outcome within 1m")) is None


def test_a_stored_target_of_a_plain_external_wait_reads_back_as_one() -> None:
    assert target_from_json("external", {"resolver": "CI"}) == ExternalTarget("CI")
    target = ExternalTarget("alex", AUTH, "Sign in", "deploy", TaskStatus.EXECUTING.value)
    assert target_from_json("external", target_to_json(target)) == target
    assert not ExternalTarget("CI").on_person and target.on_person
    assert describe_target(target) == "authorisation from alex: Sign in"


def test_update_task_can_leave_a_person_status_only_for_paused_failed_or_cancelled() -> None:
    for status in (TaskStatus.INPUT_REQUIRED, TaskStatus.AUTH_REQUIRED):
        assert allowed_transitions(status) == {TaskStatus.PAUSED, TaskStatus.FAILED, TaskStatus.CANCELLED}
        assert all(status not in allowed_transitions(other) for other in TaskStatus)


def test_a_wait_for_a_task_to_need_input_is_not_failed_while_the_task_works() -> None:
    wanted = TaskStatusTarget("tsk_1", [TaskStatus.INPUT_REQUIRED])
    assert task_status_outcome(wanted, TaskStatus.PENDING) is None
    assert task_status_outcome(wanted, TaskStatus.INPUT_REQUIRED) == (WaitStatus.RESOLVED,
                                                                      "task tsk_1 reached INPUT_REQUIRED")
    assert task_status_outcome(wanted, TaskStatus.COMPLETED)[0] is WaitStatus.FAILED  # type: ignore[index]
    back = TaskStatusTarget("tsk_1", [TaskStatus.EXECUTING])
    assert task_status_outcome(back, TaskStatus.AUTH_REQUIRED) is None


def _note(wait: Wait) -> WaitNote:
    target = wait.target
    person = target if isinstance(target, ExternalTarget) and target.on_person else None
    return WaitNote(wait.id, wait.kind, wait.criteria, 1_771_000_000_000_000, None, None, person)


def test_the_summary_says_first_who_must_answer_what_and_lists_the_other_waits_apart() -> None:
    timer = Wait(namespace="default", id="wai_t", criteria="timer 10s", target=TimerTarget(10_000_000), created_at=1,
                 correlation_id="c", task_id="tsk_1")
    lines = render_state_lines(StateNotes(waits=[_note(_wait(INPUT, item="deploy")), _note(timer)]))
    assert lines[0] == "Waiting on a person: alex must answer 'Which region?' (for item deploy; wai_1)."
    assert lines[-1].startswith("Waiting on: timer 10s (timer, wai_t")


def test_the_yaml_says_who_must_answer_what_and_parses() -> None:
    view = build_task_state(_task(TaskStatus.INPUT_REQUIRED), None, [], [], None,
                            waits=[_note(_wait(AUTH, 'Sign in: "prod" #1', item="deploy"))])
    text = render_task_state_yaml(view)
    assert "status: input_required" in text
    [entry] = yaml.safe_load(text)["open_waits"]
    assert entry == {"id": "wai_1", "kind": "external", "needs": "auth", "from": "alex",
                     "question": 'Sign in: "prod" #1', "subtask": "deploy", "since": "2026-02-13T16:26:40Z"}
