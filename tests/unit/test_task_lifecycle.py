"""The task status machine: legal moves, illegal ones, and the timestamps each phase stamps."""

from pathlib import Path

import pytest

from taskmem.core.errors import IllegalTransition, StaleEtag
from taskmem.core.tasks import Task, TaskStatus, allowed_transitions, apply_task_changes, check_etag, transition


def new_task(status: TaskStatus = TaskStatus.PENDING) -> Task:
    return Task(namespace="default", id="tsk_1", name="deploy", status=status, created_at=0, updated_at=0)


def test_the_happy_path_stamps_each_phase_once() -> None:
    task = new_task()
    for now, status in enumerate([TaskStatus.PLANNING, TaskStatus.EXECUTING, TaskStatus.SYNTHESIZING,
                                  TaskStatus.COMPLETED], start=1):
        transition(task, status, now)
    assert (task.execution_started_at, task.synthesis_started_at, task.completed_at) == (2, 3, 4)


def test_replanning_keeps_the_first_execution_start() -> None:
    task = new_task(TaskStatus.EXECUTING)
    task.execution_started_at = 5
    transition(task, TaskStatus.PLANNING, 6)
    transition(task, TaskStatus.EXECUTING, 7)
    assert task.execution_started_at == 5


@pytest.mark.parametrize("start, target", [
    (TaskStatus.PENDING, TaskStatus.COMPLETED),
    (TaskStatus.PLANNING, TaskStatus.SYNTHESIZING),
    (TaskStatus.COMPLETED, TaskStatus.EXECUTING),
    (TaskStatus.ARCHIVED, TaskStatus.PENDING),
    (TaskStatus.CANCELLED, TaskStatus.PAUSED),
])
def test_illegal_transitions_are_rejected_and_leave_the_task_unchanged(start: TaskStatus, target: TaskStatus) -> None:
    task = new_task(start)
    with pytest.raises(IllegalTransition) as raised:
        transition(task, target, 1)
    assert task.status is start
    assert raised.value.metadata["requested"] == target.name


def test_a_paused_task_resumes_and_remembers_where_it_was_paused_from() -> None:
    task = new_task(TaskStatus.EXECUTING)
    transition(task, TaskStatus.PAUSED, 3)
    assert (task.paused_from, task.paused_at) == (TaskStatus.EXECUTING, 3)
    transition(task, TaskStatus.EXECUTING, 4)
    assert task.paused_from is None and task.status is TaskStatus.EXECUTING


def test_every_finished_status_can_only_be_archived_and_archived_is_final() -> None:
    for status in (TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED):
        assert allowed_transitions(status) == {TaskStatus.ARCHIVED}
    assert allowed_transitions(TaskStatus.ARCHIVED) == frozenset()


def test_changes_bump_the_etag_and_a_stale_etag_is_refused() -> None:
    task = new_task()
    before = task.etag
    apply_task_changes(task, {"name": "deploy v2"}, 9)
    assert task.etag != before and task.updated_at == 9
    check_etag(task, "")
    check_etag(task, task.etag)
    with pytest.raises(StaleEtag):
        check_etag(task, before)


def documented_transitions(text: str) -> dict[str, set[str]]:
    """The from/to table of a document: a line per status, its targets comma-separated."""
    table = text[text.index("from          to"):].splitlines()[1:]
    moves: dict[str, set[str]] = {}
    for line in table:
        cells = line.lstrip("/ ").split(None, 1)
        if not cells or cells[0] not in TaskStatus.__members__:
            break
        moves[cells[0]] = {target.strip() for target in cells[1].split(",")} if "final" not in cells[1] else set()
    return moves


@pytest.mark.parametrize("document", ["proto/taskmem/v1/task.proto", "docs/api.md"])
def test_the_documented_lifecycle_table_is_the_status_machine(document: str) -> None:
    text = (Path(__file__).resolve().parents[2] / document).read_text()
    expected = {status.name: {target.name for target in allowed_transitions(status)} for status in TaskStatus}
    assert documented_transitions(text) == expected
