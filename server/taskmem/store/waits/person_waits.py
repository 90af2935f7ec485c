"""Waits on a person (core/person_waits): the status of their task or plan item as they open and end,
written in the transaction that opens or ends the wait.

`others` is always the other open waits on a person about the same subject (the caller reads them with
store/waits/waits.open_person_waits).
"""

from __future__ import annotations

from taskmem.core.errors import NotFound
from taskmem.core.events import EventType
from taskmem.core.person_waits import (
    item_resume_status, item_status_while, kinds_of, person_target, task_resume_status, task_status_while,
)
from taskmem.core.plans import ITEM_AWAITING_PERSON, ItemStatus, PlanItem, set_item_status
from taskmem.core.tasks import AWAITING_PERSON, Task, TaskStatus
from taskmem.core.waits import Wait
from taskmem.store.access import Transaction
from taskmem.store.tasks import tasks as task_store

_CLAIM_KEY = "namespace = ? AND task_id = ? AND item_id = ?"


def _current_item(tx: Transaction, task_id: str, item_id: str) -> tuple[int, PlanItem | None]:
    version = task_store.touch_task(tx, task_id)
    return version, task_store.load_plan_item(tx, tx.namespace, task_id, version, item_id) if version else None


def _save_item(tx: Transaction, task_id: str, version: int, item: PlanItem, status: ItemStatus) -> None:
    if item.status is status:
        return
    set_item_status(item, status, tx.now)
    task_store.save_plan_item(tx, task_id, version, item)
    tx.emit(EventType.PLAN_ITEM_UPDATED, task_id, item, {"plan_version": version})


def _held(tx: Transaction, task_id: str, item_id: str) -> bool:
    row = tx.fetchone(f"SELECT 1 FROM plan_item_claims WHERE {_CLAIM_KEY} AND expires_at > ?",
                      (tx.namespace, task_id, item_id, tx.now))
    return row is not None


def enter(tx: Transaction, task: Task, wait: Wait, others: list[Wait]) -> None:
    """Before the wait is stored (the task's row locked, then `others` read): fix the status its subject returns to (FAILED_PRECONDITION when the subject
    cannot wait) and put the subject in INPUT_REQUIRED or AUTH_REQUIRED. A claim on the item ends: the
    item returns to PENDING when answered, for any agent to claim."""
    target = person_target(wait)
    assert target is not None
    kinds = [*kinds_of(others), target.kind]
    if not target.plan_item_id:
        target.resume_status = task_resume_status(task, others).value
        task_store.set_task_status_for_person_wait(tx, task.id, task_status_while(kinds))
        return
    version, item = _current_item(tx, task.id, target.plan_item_id)
    if item is None:
        raise NotFound("plan item", target.plan_item_id)
    target.resume_status = item_resume_status(item, _held(tx, task.id, item.id), others).value
    tx.execute(f"DELETE FROM plan_item_claims WHERE {_CLAIM_KEY}", (tx.namespace, task.id, item.id))
    _save_item(tx, task.id, version, item, item_status_while(kinds))


def leave(tx: Transaction, task: Task, wait: Wait, others: list[Wait]) -> None:
    """After the wait ended (the task's row locked, then `others` read): its subject, if it still waits on a
    person, moves to the status the remaining waits call for, or back to the one it had before them. A
    subject moved elsewhere meanwhile (the task paused or cancelled, the item updated or dropped by a
    replan) stays where it was put."""
    target = person_target(wait)
    assert target is not None
    kinds = kinds_of(others)
    if not target.plan_item_id:
        if task.status in AWAITING_PERSON:
            status = task_status_while(kinds) if kinds else TaskStatus(target.resume_status)
            task_store.set_task_status_for_person_wait(tx, task.id, status)
        return
    version, item = _current_item(tx, wait.task_id, target.plan_item_id)
    if item is not None and item.status in ITEM_AWAITING_PERSON:
        _save_item(tx, wait.task_id, version, item,
                   item_status_while(kinds) if kinds else ItemStatus(target.resume_status))
