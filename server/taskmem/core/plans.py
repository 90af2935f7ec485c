"""Plans: DAG validation, carrying item state across replans, and item status stamping."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from taskmem.core.errors import InvalidArgument, PlanCycle, PlanUnknownDependency

SUMMARY_MAX = 100


class ItemStatus(enum.StrEnum):
    PENDING = "PLAN_ITEM_STATUS_PENDING"
    IN_PROGRESS = "PLAN_ITEM_STATUS_IN_PROGRESS"
    COMPLETED = "PLAN_ITEM_STATUS_COMPLETED"
    FAILED = "PLAN_ITEM_STATUS_FAILED"
    SKIPPED = "PLAN_ITEM_STATUS_SKIPPED"
    BLOCKED = "PLAN_ITEM_STATUS_BLOCKED"
    INPUT_REQUIRED = "PLAN_ITEM_STATUS_INPUT_REQUIRED"
    AUTH_REQUIRED = "PLAN_ITEM_STATUS_AUTH_REQUIRED"


DONE = frozenset({ItemStatus.COMPLETED, ItemStatus.SKIPPED})
# Waiting on a person (core/person_waits): set only through waits, never by UpdatePlanItem.
ITEM_AWAITING_PERSON = frozenset({ItemStatus.INPUT_REQUIRED, ItemStatus.AUTH_REQUIRED})


class StatusSource(enum.StrEnum):
    """Who set an item's status: nobody yet, a caller (UpdatePlanItem), or inference from a message."""

    UNSPECIFIED = "PLAN_ITEM_STATUS_SOURCE_UNSPECIFIED"
    EXPLICIT = "PLAN_ITEM_STATUS_SOURCE_EXPLICIT"
    INFERRED = "PLAN_ITEM_STATUS_SOURCE_INFERRED"


@dataclasses.dataclass
class PlanItem:
    id: str
    ordinal: int
    title: str
    status: ItemStatus = ItemStatus.PENDING
    stage: str = ""
    summary: str = ""
    active_issue: str = ""
    depends_on: list[str] = dataclasses.field(default_factory=list)
    tool_name: str = ""
    input: dict[str, Any] = dataclasses.field(default_factory=dict)
    narrative: str = ""
    started_at: int | None = None
    completed_at: int | None = None
    duration_us: int | None = None
    status_source: StatusSource = StatusSource.UNSPECIFIED
    status_message_id: str = ""  # the message an INFERRED status came from
    holder_id: str = ""  # who holds the item's claim (core/claims), filled in by the reads that show it
    question: StepQuestion | None = None  # "may be finished" (core/plan_inference), until answered


# How a "may be finished" question is answered, as the views say it.
ANSWER_HINT = "answer with UpdatePlanItem: status COMPLETED if it is finished, dismiss_question if not"


@dataclasses.dataclass(frozen=True)
class StepQuestion:
    """A message probably finishes the item, but not by certain evidence: asked, never marked done.

    It stands until someone answers it (the item is completed, or the question dismissed) or the
    item's status changes."""

    message_id: str
    evidence: str  # the clause of the message that says it
    reason: str  # why the evidence was not certain

    def text(self, item: PlanItem) -> str:
        return f"may be finished: step {item.ordinal + 1} {item.title!r} (message {self.message_id})"


@dataclasses.dataclass
class Claim:
    """One caller's hold on a plan item until expires_at (the rules for taking one are in core/claims.py)."""
    task_id: str
    item_id: str
    holder: str
    claimed_at: int
    expires_at: int

    def live(self, now: int) -> bool:
        return self.expires_at > now


@dataclasses.dataclass
class Plan:
    task_id: str
    version: int
    items: list[PlanItem]
    created_at: int
    reason: str = ""
    claims: list[Claim] = dataclasses.field(default_factory=list)  # the items held now, in plan order

    def item(self, item_id: str) -> PlanItem | None:
        return next((item for item in self.items if item.id == item_id), None)


def validate_plan(items: list[PlanItem], field: str = "plan") -> None:
    """Reject duplicate ids, unknown dependencies and cycles, naming the item at fault."""
    index: dict[str, int] = {}
    for position, item in enumerate(items):
        if item.id in index:
            raise InvalidArgument(f"{field}[{position}].id", f"duplicate item id {item.id!r}", item_id=item.id)
        index[item.id] = position
    for position, item in enumerate(items):
        for dependency in item.depends_on:
            if dependency not in index:
                raise PlanUnknownDependency(
                    f"{field}[{position}].depends_on",
                    f"item {item.id!r} depends on unknown item {dependency!r}", item_id=item.id,
                )
            if dependency == item.id:
                raise PlanCycle(f"{field}[{position}].depends_on", f"item {item.id!r} depends on itself",
                                item_id=item.id)
    cycle = _find_cycle(items)
    if cycle:
        position = index[cycle[0]]
        raise PlanCycle(f"{field}[{position}].depends_on",
                        f"dependency cycle: {' -> '.join(cycle + [cycle[0]])}", item_id=cycle[0])


def _find_cycle(items: list[PlanItem]) -> list[str]:
    """A cycle's item ids in order, or [] when the graph is a DAG (iterative DFS)."""
    edges = {item.id: item.depends_on for item in items}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    for root in edges:
        if state.get(root):
            continue
        path: list[str] = []
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            node, next_edge = stack.pop()
            if next_edge == 0:
                state[node] = 1
                path.append(node)
            if next_edge < len(edges[node]):
                stack.append((node, next_edge + 1))
                child = edges[node][next_edge]
                if state.get(child) == 1:
                    return path[path.index(child):]
                if not state.get(child):
                    stack.append((child, 0))
            else:
                state[node] = 2
                path.pop()
    return []


def carry_over(previous: Plan | None, items: list[PlanItem]) -> list[PlanItem]:
    """Items whose id was in the previous version keep its status (and who set it), summary, issue and times."""
    if previous is None:
        return items
    for item in items:
        old = previous.item(item.id)
        if old is not None:
            item.status, item.summary, item.active_issue = old.status, old.summary, old.active_issue
            item.started_at, item.completed_at, item.duration_us = old.started_at, old.completed_at, old.duration_us
            item.status_source, item.status_message_id = old.status_source, old.status_message_id
            item.question = old.question
    return items


def set_item_status(item: PlanItem, status: ItemStatus, now: int) -> None:
    """Change an item's status, stamping start on first IN_PROGRESS and completion with its duration."""
    if status is ItemStatus.IN_PROGRESS:
        if item.started_at is None or item.status in (ItemStatus.COMPLETED, ItemStatus.FAILED):
            item.started_at = now
        item.completed_at = item.duration_us = None
    elif status in (ItemStatus.COMPLETED, ItemStatus.FAILED):
        item.completed_at = now
        item.duration_us = now - item.started_at if item.started_at is not None else None
    elif status is ItemStatus.PENDING:
        item.started_at = item.completed_at = item.duration_us = None
    if status is not item.status:
        item.question = None  # a step whose status changed is no longer the step the question was about
    item.status = status
