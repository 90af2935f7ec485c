"""The deterministic answer to "where was I?", computed from the plan and the record."""

from __future__ import annotations

import dataclasses

from taskmem.core.actions import Action
from taskmem.core.messages import Message
from taskmem.core.plans import DONE, ItemStatus, Plan, PlanItem
from taskmem.core.tasks import Task


@dataclasses.dataclass
class Progress:
    task: Task
    plan_version: int
    total_items: int
    completed: list[PlanItem]
    current: PlanItem | None
    next: list[PlanItem]
    blocked: list[PlanItem]
    failed: list[PlanItem]
    last_error: str
    recent_messages: list[Message]
    summary: str


def compute_progress(task: Task, plan: Plan | None, last_failed_action: Action | None,
                     recent_messages: list[Message]) -> Progress:
    items = plan.items if plan else []
    by_id = {item.id: item for item in items}
    completed = [item for item in items if item.status in DONE]
    in_progress = [item for item in items if item.status is ItemStatus.IN_PROGRESS]
    failed = [item for item in items if item.status is ItemStatus.FAILED]
    ready: list[PlanItem] = []
    blocked = [item for item in items if item.status is ItemStatus.BLOCKED]
    for item in items:
        if item.status is not ItemStatus.PENDING:
            continue
        dependencies = [by_id[d] for d in item.depends_on if d in by_id]
        if all(d.status in DONE for d in dependencies):
            ready.append(item)
        elif any(d.status in (ItemStatus.FAILED, ItemStatus.BLOCKED) for d in dependencies):
            blocked.append(item)
    blocked.sort(key=lambda item: item.ordinal)
    last_error = _last_error(task, last_failed_action, failed)
    current = in_progress[0] if in_progress else None
    return Progress(
        task=task, plan_version=plan.version if plan else 0, total_items=len(items),
        completed=completed, current=current, next=ready, blocked=blocked, failed=failed,
        last_error=last_error, recent_messages=recent_messages,
        summary=render_progress_summary(len(items), completed, current, ready, blocked, last_error),
    )


def _last_error(task: Task, action: Action | None, failed: list[PlanItem]) -> str:
    if task.error_summary.message:
        return task.error_summary.message
    if action is not None:
        return f"action {action.id} ({action.summary}): {action.error or 'failed'}"
    if failed:
        newest = max(failed, key=lambda item: item.completed_at or 0)
        return f"item {newest.id} ({newest.title}) failed" + (f": {newest.summary}" if newest.summary else "")
    return ""


def _label(item: PlanItem) -> str:
    return item.id if item.title == item.id else f"{item.id} — {item.title}"


def render_progress_summary(total: int, completed: list[PlanItem], current: PlanItem | None,
                            ready: list[PlanItem], blocked: list[PlanItem], last_error: str) -> str:
    """A few lines for a prompt, e.g. "Completed 3/5: build, push, ssh. Current: pull — pull image."."""
    if total == 0:
        return "No plan yet." + (f" Last error: {last_error}" if last_error else "")
    lines = [f"Completed {len(completed)}/{total}" + (": " + ", ".join(i.id for i in completed) if completed else "") + "."]
    if current is not None:
        lines.append(f"Current: {_label(current)}." + (f" Issue: {current.active_issue}." if current.active_issue else ""))
    if ready:
        lines.append("Next: " + "; ".join(_label(i) for i in ready[:3]) + ".")
    if blocked:
        lines.append("Blocked: " + ", ".join(i.id for i in blocked) + ".")
    if last_error:
        lines.append(f"Last error: {last_error}")
    if len(completed) == total:
        lines.append("All items done.")
    return "\n".join(lines)
