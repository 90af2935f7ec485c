"""Waits on a person: an external wait of kind INPUT or AUTH puts its task (or one plan item) in
INPUT_REQUIRED or AUTH_REQUIRED while it is open, and writes the question and the answer into the
task's thread.

Pure: store/waits/person_waits.py reads the other open waits and writes what this module decides.
Several waits on a person may be open about one subject (the task, or one item of it): the subject
is in AUTH_REQUIRED while any of them asks for an authorisation, else in INPUT_REQUIRED, and it
returns to the status it had before the first of them once the last one ends. Every such wait keeps
that status (ExternalTarget.resume_status), so whichever ends last knows it.
"""

from __future__ import annotations

from collections.abc import Iterable

from taskmem.core.errors import FailedPrecondition
from taskmem.core.messages import Role
from taskmem.core.plans import DONE, ITEM_AWAITING_PERSON, ItemStatus, PlanItem
from taskmem.core.tasks import AWAITING_PERSON, WORKING, Task, TaskStatus
from taskmem.core.waits import ExternalKind, ExternalTarget, Wait, WaitStatus

_WORDS = {ExternalKind.INPUT: "Input", ExternalKind.AUTH: "Auth"}


def person_target(wait: Wait) -> ExternalTarget | None:
    """The wait's target if the wait is on a person, else None."""
    target = wait.target
    return target if isinstance(target, ExternalTarget) and target.on_person else None


def same_subject(wait: Wait, other: Wait) -> bool:
    """Both waits are on a person about the same task, or the same item of it."""
    mine, theirs = person_target(wait), person_target(other)
    return (mine is not None and theirs is not None and wait.task_id == other.task_id
            and mine.plan_item_id == theirs.plan_item_id)


def _needs_auth(kinds: Iterable[ExternalKind]) -> bool:
    return ExternalKind.AUTH in set(kinds)


def task_status_while(kinds: Iterable[ExternalKind]) -> TaskStatus:
    """The task's status while waits of these kinds are open on it: an authorisation outranks an answer."""
    return TaskStatus.AUTH_REQUIRED if _needs_auth(kinds) else TaskStatus.INPUT_REQUIRED


def item_status_while(kinds: Iterable[ExternalKind]) -> ItemStatus:
    return ItemStatus.AUTH_REQUIRED if _needs_auth(kinds) else ItemStatus.INPUT_REQUIRED


def task_resume_status(task: Task, others: list[Wait]) -> TaskStatus:
    """The status the task returns to when its waits on a person have all ended: the one it has now, or, when
    it already waits on a person, the one the open waits keep. FAILED_PRECONDITION when it cannot wait."""
    if task.status in AWAITING_PERSON:
        kept = [person_target(w) for w in others]
        return next((TaskStatus(t.resume_status) for t in kept if t is not None and t.resume_status),
                    TaskStatus.EXECUTING)
    if task.status not in WORKING:
        raise FailedPrecondition(f"task {task.id} is {task.status.name}: only a task in PENDING, PLANNING, EXECUTING"
                                 " or SYNTHESIZING can wait on a person", field="task_id",
                                 status=task.status.value)
    return task.status


def item_resume_status(item: PlanItem, held: bool, others: list[Wait]) -> ItemStatus:
    """The status the item returns to: the one it has now (PENDING for an item held under a claim, which the
    wait ends, so that any agent can claim it again), or the one the open waits keep."""
    if item.status in ITEM_AWAITING_PERSON:
        kept = [person_target(w) for w in others]
        return next((ItemStatus(t.resume_status) for t in kept if t is not None and t.resume_status),
                    ItemStatus.PENDING)
    if item.status in DONE or item.status is ItemStatus.FAILED:
        raise FailedPrecondition(f"plan item {item.id!r} is {item.status.name}: a finished item cannot wait on a"
                                 " person", field="target.external.plan_item_id", item_id=item.id)
    return ItemStatus.PENDING if held and item.status is ItemStatus.IN_PROGRESS else item.status


def kinds_of(waits: Iterable[Wait]) -> list[ExternalKind]:
    return [t.kind for t in (person_target(w) for w in waits) if t is not None]


def question_message(wait: Wait) -> tuple[Role, str]:
    """What the task's thread gets when a wait on a person opens: "[Input required] <question> (asked of
    <resolver>; answer with ResolveWait <id>)"."""
    target = person_target(wait)
    assert target is not None
    asked = f"asked of {target.resolver}; " if target.resolver else ""
    item = f" [plan item {target.plan_item_id}]" if target.plan_item_id else ""
    return Role.AGENT, f"[{_WORDS[target.kind]} required]{item} {target.question} ({asked}answer with ResolveWait {wait.id})"


def answer_message(wait: Wait) -> tuple[Role, str] | None:
    """What the thread gets when a person answered (ResolveWait: RESOLVED, or FAILED for a refusal): the
    answer, as the person's message. None for an ending nobody answered (timed out, cancelled)."""
    target = person_target(wait)
    if target is None or wait.status not in (WaitStatus.RESOLVED, WaitStatus.FAILED):
        return None
    word = "received" if wait.status is WaitStatus.RESOLVED else "refused"
    return Role.USER, f"[{_WORDS[target.kind]} {word}] {wait.result}"
