"""What a fork keeps of the original's plan and status (core/forks), with no I/O."""

from taskmem.core.forks import fork_items, fork_name, fork_status
from taskmem.core.plans import ItemStatus, Plan, PlanItem
from taskmem.core.tasks import TaskStatus

AT = 1_000


def _plan(*items: PlanItem) -> Plan:
    return Plan("tsk_1", 2, list(items), 0, "")


def test_an_item_held_or_waiting_on_a_person_then_is_ready_again_in_the_fork() -> None:
    then = _plan(PlanItem("held", 0, "Held", ItemStatus.IN_PROGRESS, holder_id="agent-1"),
                 PlanItem("asks", 1, "Asks", ItemStatus.INPUT_REQUIRED),
                 PlanItem("working", 2, "Working", ItemStatus.IN_PROGRESS))
    defined = _plan(PlanItem("held", 0, "Held", ItemStatus.COMPLETED, started_at=500, completed_at=2_000),
                    PlanItem("asks", 1, "Asks"), PlanItem("working", 2, "Working", started_at=900))
    items = fork_items(then, defined, AT)
    assert [(i.id, i.status, i.holder_id, i.started_at) for i in items] == [
        ("held", ItemStatus.PENDING, "", None), ("asks", ItemStatus.PENDING, "", None),
        ("working", ItemStatus.IN_PROGRESS, "", 900)]


def test_the_fork_takes_each_items_definition_from_its_version_and_its_progress_from_then() -> None:
    then = _plan(PlanItem("a", 0, "A", ItemStatus.COMPLETED, summary="done then"))
    defined = _plan(PlanItem("a", 0, "A", ItemStatus.FAILED, stage="build", tool_name="make", input={"x": 1},
                             summary="failed later", started_at=100, completed_at=AT + 5))
    [item] = fork_items(then, defined, AT)
    assert (item.status, item.summary, item.stage, item.tool_name, item.input) == (
        ItemStatus.COMPLETED, "done then", "build", "make", {"x": 1})
    assert (item.started_at, item.completed_at, item.duration_us) == (100, None, None)  # finished after AT


def test_a_task_waiting_on_a_person_forks_into_a_working_one_and_others_keep_their_status() -> None:
    assert fork_status(TaskStatus.AUTH_REQUIRED) is TaskStatus.EXECUTING
    assert fork_status(TaskStatus.PAUSED) is TaskStatus.PAUSED
    assert fork_name("", "x" * 200, 200) == "x" * 193 + " (fork)" and fork_name("Mine", "Theirs", 200) == "Mine"
