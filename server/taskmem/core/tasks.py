"""The task resource and its lifecycle: which status changes are legal and what each stamps."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from taskmem.core.errors import IllegalTransition, StaleEtag


class TaskStatus(enum.StrEnum):
    PENDING = "TASK_STATUS_PENDING"
    PLANNING = "TASK_STATUS_PLANNING"
    EXECUTING = "TASK_STATUS_EXECUTING"
    SYNTHESIZING = "TASK_STATUS_SYNTHESIZING"
    COMPLETED = "TASK_STATUS_COMPLETED"
    FAILED = "TASK_STATUS_FAILED"
    CANCELLED = "TASK_STATUS_CANCELLED"
    PAUSED = "TASK_STATUS_PAUSED"
    ARCHIVED = "TASK_STATUS_ARCHIVED"
    INPUT_REQUIRED = "TASK_STATUS_INPUT_REQUIRED"
    AUTH_REQUIRED = "TASK_STATUS_AUTH_REQUIRED"


class ApprovalMode(enum.StrEnum):
    AUTO = "APPROVAL_MODE_AUTO"
    PLAN = "APPROVAL_MODE_PLAN"
    EACH_STEP = "APPROVAL_MODE_EACH_STEP"


WORKING = frozenset({TaskStatus.PENDING, TaskStatus.PLANNING, TaskStatus.EXECUTING, TaskStatus.SYNTHESIZING})
FINISHED = frozenset({TaskStatus.COMPLETED, TaskStatus.FAILED, TaskStatus.CANCELLED})
# Waiting on a person (core/person_waits): entered and left only through waits, never by UpdateTask.
AWAITING_PERSON = frozenset({TaskStatus.INPUT_REQUIRED, TaskStatus.AUTH_REQUIRED})

_FORWARD: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.PENDING: frozenset({TaskStatus.PLANNING, TaskStatus.EXECUTING}),
    TaskStatus.PLANNING: frozenset({TaskStatus.EXECUTING}),
    TaskStatus.EXECUTING: frozenset({TaskStatus.PLANNING, TaskStatus.SYNTHESIZING, TaskStatus.COMPLETED}),
    TaskStatus.SYNTHESIZING: frozenset({TaskStatus.COMPLETED}),
}


def allowed_transitions(current: TaskStatus) -> frozenset[TaskStatus]:
    """Every status a task in `current` may move to."""
    if current in WORKING:
        return _FORWARD[current] | {TaskStatus.PAUSED, TaskStatus.FAILED, TaskStatus.CANCELLED}
    if current is TaskStatus.PAUSED:
        return WORKING | {TaskStatus.FAILED, TaskStatus.CANCELLED, TaskStatus.ARCHIVED}
    if current in FINISHED:
        return frozenset({TaskStatus.ARCHIVED})
    if current in AWAITING_PERSON:
        return frozenset({TaskStatus.PAUSED, TaskStatus.FAILED, TaskStatus.CANCELLED})
    return frozenset()


def reachable_moves(current: TaskStatus) -> frozenset[TaskStatus]:
    """Every status a task in `current` may move to next by any means: UpdateTask's moves, and the moves a
    wait on a person makes (a working status into INPUT_REQUIRED or AUTH_REQUIRED and back)."""
    moves = allowed_transitions(current)
    if current in WORKING:
        return moves | AWAITING_PERSON
    if current in AWAITING_PERSON:
        return moves | WORKING | AWAITING_PERSON
    return moves


def set_status_for_person_wait(task: Task, status: TaskStatus, now: int) -> TaskStatus | None:
    """Move the task into or out of a status of waiting on a person (the moves UpdateTask may not make);
    returns the previous status if it changed."""
    previous = task.status
    if status is previous:
        return None
    task.status, task.updated_at, task.revision = status, now, task.revision + 1
    return previous


@dataclasses.dataclass
class ErrorSummary:
    failed_stage: str = ""
    failed_step: str = ""
    message: str = ""


@dataclasses.dataclass
class Task:
    namespace: str
    id: str
    name: str
    status: TaskStatus
    created_at: int
    updated_at: int
    goal: str = ""
    workspace: str = ""
    context: dict[str, Any] = dataclasses.field(default_factory=dict)
    metadata: dict[str, Any] = dataclasses.field(default_factory=dict)
    approval_mode: ApprovalMode = ApprovalMode.AUTO
    callback_url: str = ""
    final_answer: str = ""
    error_summary: ErrorSummary = dataclasses.field(default_factory=ErrorSummary)
    plan_version: int = 0
    revision: int = 1
    paused_from: TaskStatus | None = None
    plan_generated_at: int | None = None
    execution_started_at: int | None = None
    synthesis_started_at: int | None = None
    completed_at: int | None = None
    paused_at: int | None = None
    archived_at: int | None = None
    plan_inference_disabled: bool = False
    # EventType values POSTed to callback_url; empty means core.webhooks.DEFAULT_EVENT_TYPES.
    webhook_event_types: list[str] = dataclasses.field(default_factory=list)

    @property
    def etag(self) -> str:
        return f'W/"{self.revision}"'


# Fields UpdateTask may change, by their proto names.
UPDATABLE_FIELDS = frozenset({
    "name", "goal", "status", "workspace", "context", "metadata", "approval_mode",
    "callback_url", "final_answer", "error_summary", "plan_inference_disabled", "webhook_event_types",
})


def check_etag(task: Task, etag: str) -> None:
    """An empty etag means "no check"; any other must be the current one (AIP-154)."""
    if etag and etag != task.etag:
        raise StaleEtag(f"etag {etag} is stale: task {task.id} is at {task.etag}; read it again")


def transition(task: Task, target: TaskStatus, now: int) -> None:
    """Move task to target, stamping the phase's timestamp; raises IllegalTransition."""
    if target == task.status:
        return
    if target not in allowed_transitions(task.status):
        allowed = ", ".join(sorted(s.name for s in allowed_transitions(task.status))) or "none"
        raise IllegalTransition(
            f"task {task.id} cannot go from {task.status.name} to {target.name} (allowed: {allowed})",
            field="task.status", current=task.status.name, requested=target.name,
        )
    if target is TaskStatus.PAUSED:
        task.paused_from, task.paused_at = task.status, now
    elif task.status is TaskStatus.PAUSED:
        task.paused_from = None
    if target is TaskStatus.EXECUTING and task.execution_started_at is None:
        task.execution_started_at = now
    if target is TaskStatus.SYNTHESIZING and task.synthesis_started_at is None:
        task.synthesis_started_at = now
    if target in FINISHED:
        task.completed_at = now
    if target is TaskStatus.ARCHIVED:
        task.archived_at = now
    task.status = target


# Metadata keys the server keeps (waits, stuck alerts): a client's change never sets, replaces or removes them.
SERVER_METADATA_KEYS = frozenset({"active_wait_ids", "last_wait_state", "last_wait_event_at", "last_stuck_alert_at"})


def client_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """A client's metadata without the server-kept keys (a stale copy read earlier is ignored, not written)."""
    return {key: value for key, value in metadata.items() if key not in SERVER_METADATA_KEYS}


@dataclasses.dataclass(frozen=True)
class MetadataChange:
    """A client's change of a task's metadata (AIP-134): the whole document (update_mask "metadata") and/or
    single keys ("metadata.<key>": set, or removed when the request's metadata lacks the key).
    Server-kept keys stay as the server wrote them."""

    replacement: dict[str, Any] | None = None
    set_keys: dict[str, Any] = dataclasses.field(default_factory=dict)
    removed_keys: frozenset[str] = frozenset()

    def apply(self, current: dict[str, Any]) -> dict[str, Any]:
        merged = client_metadata(current if self.replacement is None else self.replacement)
        merged.update(self.set_keys)
        for key in self.removed_keys:
            merged.pop(key, None)
        return {**merged, **{key: value for key, value in current.items() if key in SERVER_METADATA_KEYS}}


def apply_task_changes(task: Task, changes: dict[str, Any], now: int) -> TaskStatus | None:
    """Apply validated field changes (status last); returns the previous status if it changed."""
    previous = task.status
    for name, value in changes.items():
        if isinstance(value, MetadataChange):
            value = value.apply(task.metadata)
        if name != "status":
            setattr(task, name, value)
    if "status" in changes:
        transition(task, changes["status"], now)
    task.updated_at = now
    task.revision += 1
    return previous if task.status != previous else None
