"""Execution-log entries (actions) and their log lines."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from taskmem.core.errors import FailedPrecondition, InvalidArgument


class ActionType(enum.StrEnum):
    CLI = "ACTION_TYPE_CLI"
    GUI = "ACTION_TYPE_GUI"
    WAIT = "ACTION_TYPE_WAIT"
    VISION = "ACTION_TYPE_VISION"
    REASONING = "ACTION_TYPE_REASONING"
    TOOL = "ACTION_TYPE_TOOL"
    SYSTEM = "ACTION_TYPE_SYSTEM"
    OTHER = "ACTION_TYPE_OTHER"


class ActionStatus(enum.StrEnum):
    RUNNING = "ACTION_STATUS_RUNNING"
    SUCCEEDED = "ACTION_STATUS_SUCCEEDED"
    FAILED = "ACTION_STATUS_FAILED"
    SKIPPED = "ACTION_STATUS_SKIPPED"


@dataclasses.dataclass
class Action:
    namespace: str
    id: str
    task_id: str
    type: ActionType
    summary: str
    status: ActionStatus
    created_at: int
    plan_item_id: str = ""
    tool_name: str = ""
    input: dict[str, Any] = dataclasses.field(default_factory=dict)
    output: dict[str, Any] = dataclasses.field(default_factory=dict)
    error: str = ""
    duration_us: int | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    log_lines: int = 0
    completed_at: int | None = None


@dataclasses.dataclass
class ActionLogLine:
    action_id: str
    sequence: int
    stream: str
    content: str
    created_at: int


@dataclasses.dataclass
class Completion:
    """How a running action ended, as CompleteAction reports it."""

    status: ActionStatus
    output: dict[str, Any]
    error: str
    duration_us: int | None
    tokens_in: int
    tokens_out: int


def complete_action(action: Action, completion: Completion, now: int) -> None:
    """Finish a running action; its duration defaults to the time since it was recorded."""
    if action.status is not ActionStatus.RUNNING:
        raise FailedPrecondition(f"action {action.id} has already finished ({action.status.name})",
                                 field="action_id")
    if completion.status is ActionStatus.RUNNING:
        raise InvalidArgument("status", "must be SUCCEEDED, FAILED or SKIPPED")
    action.status = completion.status
    action.output = completion.output or action.output
    action.error = completion.error or action.error
    action.duration_us = completion.duration_us if completion.duration_us is not None else now - action.created_at
    action.tokens_in += completion.tokens_in
    action.tokens_out += completion.tokens_out
    action.completed_at = now


def require_running(action: Action) -> None:
    if action.status is not ActionStatus.RUNNING:
        raise FailedPrecondition(f"action {action.id} has finished ({action.status.name}); its log is closed",
                                 field="action_id")
