"""GetProgress's deterministic "where was I?" answer."""

from taskmem.core.plans import ItemStatus, Plan, PlanItem
from taskmem.core.progress import compute_progress
from taskmem.core.tasks import Task, TaskStatus


def plan(*specs: tuple[str, ItemStatus, list[str]]) -> Plan:
    return Plan("t", 2, [PlanItem(id=i, ordinal=n, title=f"do {i}", status=s, depends_on=d)
                         for n, (i, s, d) in enumerate(specs)], 0)


TASK = Task(namespace="default", id="t", name="deploy", status=TaskStatus.EXECUTING, created_at=0, updated_at=0)


def test_progress_names_done_current_next_and_blocked_items() -> None:
    progress = compute_progress(TASK, plan(
        ("build", ItemStatus.COMPLETED, []),
        ("lint", ItemStatus.SKIPPED, []),
        ("push", ItemStatus.IN_PROGRESS, ["build"]),
        ("docs", ItemStatus.PENDING, ["lint"]),
        ("deploy", ItemStatus.PENDING, ["push"]),
        ("migrate", ItemStatus.FAILED, []),
        ("verify", ItemStatus.PENDING, ["migrate"]),
    ), None, [])
    assert [i.id for i in progress.completed] == ["build", "lint"]
    assert progress.current is not None and progress.current.id == "push"
    assert [i.id for i in progress.next] == ["docs"]
    assert [i.id for i in progress.blocked] == ["verify"]
    assert [i.id for i in progress.failed] == ["migrate"]
    assert "item migrate (do migrate) failed" in progress.last_error
    assert progress.summary.splitlines()[:3] == [
        "Completed 2/7: build, lint.", "Current: push — do push.", "Next: docs — do docs."]


def test_a_task_without_a_plan_says_so() -> None:
    progress = compute_progress(TASK, None, None, [])
    assert progress.total_items == 0 and progress.summary == "No plan yet."


def test_the_task_error_summary_wins_as_last_error() -> None:
    task = Task(namespace="default", id="t", name="x", status=TaskStatus.FAILED, created_at=0, updated_at=0)
    task.error_summary.message = "disk full"
    assert compute_progress(task, plan(("a", ItemStatus.FAILED, [])), None, []).last_error == "disk full"
