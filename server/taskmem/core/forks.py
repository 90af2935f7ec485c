"""ForkTask (issue 28, point 3): what a task begun from another's past keeps, and what it leaves behind.

A fork starts from the original as its events left it at the fork point (store/state/view_as_of), minus
what belonged to someone then: a claim's holder and a person's awaited answer are the original's, so the
fork's items they held are ready again and a task that waited on a person works again.
"""

from __future__ import annotations

import dataclasses

from taskmem.core.plans import ITEM_AWAITING_PERSON, ItemStatus, Plan, PlanItem
from taskmem.core.tasks import AWAITING_PERSON, FINISHED, TaskStatus

NAME_SUFFIX = " (fork)"


def fork_status(status_then: TaskStatus) -> TaskStatus:
    """The fork's status: the original's then, except that waits are not copied, so one waiting on a person
    is EXECUTING (the status a wait on a person returns a task to)."""
    return TaskStatus.EXECUTING if status_then in AWAITING_PERSON else status_then


def fork_name(requested: str, name_then: str, limit: int) -> str:
    return requested or (name_then[:limit - len(NAME_SUFFIX)] + NAME_SUFFIX)


def is_finished(status: TaskStatus) -> bool:
    return status in FINISHED or status is TaskStatus.ARCHIVED


def fork_items(then: Plan, defined: Plan | None, at: int) -> list[PlanItem]:
    """The fork's plan items: each item's definition (stage, tool, input, narrative; fixed per plan version)
    from the stored version, its status, summary and active issue as they stood at `at` (µs). An item held
    under a claim or waiting on a person then is PENDING; times later than `at` are left out."""
    items = []
    for item in then.items:
        stored = defined.item(item.id) if defined is not None else None
        base = stored if stored is not None else item
        status = item.status
        if (status is ItemStatus.IN_PROGRESS and item.holder_id) or status in ITEM_AWAITING_PERSON:
            status = ItemStatus.PENDING
        started = base.started_at if base.started_at is not None and base.started_at <= at else None
        completed = base.completed_at if base.completed_at is not None and base.completed_at <= at else None
        if status is ItemStatus.PENDING:
            started = completed = None
        elif status not in (ItemStatus.COMPLETED, ItemStatus.FAILED):
            completed = None
        items.append(dataclasses.replace(
            base, ordinal=item.ordinal, status=status, summary=item.summary, active_issue=item.active_issue,
            started_at=started, completed_at=completed,
            duration_us=completed - started if completed is not None and started is not None else None,
            status_message_id="", holder_id=""))
    return items
