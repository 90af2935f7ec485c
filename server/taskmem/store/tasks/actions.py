"""Actions (execution-log entries) and their log lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from taskmem.core.actions import (
    Action, ActionLogLine, ActionStatus, ActionType, Completion, complete_action, require_running,
)
from taskmem.core.errors import InvalidArgument, NotFound
from taskmem.core.events import EventType
from taskmem.store.tasks.tasks import load_task, touch_task
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction

_COLUMNS = (
    "namespace", "id", "task_id", "plan_item_id", "type", "tool_name", "summary", "status", "input", "output",
    "error", "duration_us", "tokens_in", "tokens_out", "log_lines", "created_at", "completed_at",
)
# One encoder for every row (json.dumps with an option builds a new one per call).
_json = json.JSONEncoder(allow_nan=False).encode
_INSERT = f"INSERT INTO actions ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def _values(action: Action) -> tuple[Any, ...]:
    return (
        action.namespace, action.id, action.task_id, action.plan_item_id, action.type.value, action.tool_name,
        action.summary, action.status.value, _json(action.input),
        _json(action.output), action.error, action.duration_us, action.tokens_in,
        action.tokens_out, action.log_lines, action.created_at, action.completed_at,
    )


def action_from_row(row: Row) -> Action:
    return Action(
        namespace=row["namespace"], id=row["id"], task_id=row["task_id"], plan_item_id=row["plan_item_id"],
        type=ActionType(row["type"]), tool_name=row["tool_name"], summary=row["summary"],
        status=ActionStatus(row["status"]), input=json.loads(row["input"]), output=json.loads(row["output"]),
        error=row["error"], duration_us=row["duration_us"], tokens_in=row["tokens_in"],
        tokens_out=row["tokens_out"], log_lines=row["log_lines"], created_at=row["created_at"],
        completed_at=row["completed_at"],
    )


def line_from_row(row: Row) -> ActionLogLine:
    return ActionLogLine(row["action_id"], row["sequence"], row["stream"], row["content"], row["created_at"])


def load_action(db: Reader, namespace: str, action_id: str) -> Action:
    row = db.fetchone("SELECT * FROM actions WHERE namespace = ? AND id = ?", (namespace, action_id))
    if row is None:
        raise NotFound("action", action_id)
    return action_from_row(row)


def list_actions(db: Reader, namespace: str, task_id: str, plan_item_id: str,
                       after_key: list[Any] | None, limit: int, statuses: Sequence[ActionStatus] = ()) -> list[Action]:
    load_task(db, namespace, task_id)
    rows = (PageQuery("actions", order=("created_at", "id"))
            .equals("namespace", namespace).equals("task_id", task_id).equals("plan_item_id", plan_item_id)
            .any_of("status", (s.value for s in statuses)).after(after_key).fetch(db, limit))
    return [action_from_row(row) for row in rows]


def last_failed_action(db: Reader, namespace: str, task_id: str) -> Action | None:
    row = db.fetchone(
        "SELECT * FROM actions WHERE namespace = ? AND task_id = ? AND status = ?"
        " ORDER BY created_at DESC, id DESC LIMIT 1", (namespace, task_id, ActionStatus.FAILED.value))
    return action_from_row(row) if row else None


def list_log_lines(db: Reader, namespace: str, action_id: str, after: int, limit: int,
                   written_after: int | None = None) -> list[ActionLogLine]:
    """Lines past sequence `after`, in order; with written_after, only lines written after that time (the
    older ones have expired: core/retention.py, log_cutoff)."""
    rows = db.fetchall(
        "SELECT * FROM action_logs WHERE namespace = ? AND action_id = ? AND sequence > ? AND created_at > ?"
        " ORDER BY sequence LIMIT ?", (namespace, action_id, after, -1 if written_after is None else written_after,
                                       limit))
    return [line_from_row(row) for row in rows]


def record_action(tx: Transaction, action: Action) -> Action:
    version = touch_task(tx, action.task_id)
    if action.plan_item_id:
        found = tx.fetchone(
            "SELECT 1 FROM plan_items WHERE namespace = ? AND task_id = ? AND plan_version = ? AND id = ?",
            (tx.namespace, action.task_id, version, action.plan_item_id))
        if found is None:
            raise InvalidArgument("plan_item_id", f"no item {action.plan_item_id!r} in the current plan")
    tx.defer("actions", _INSERT, _values(action))
    tx.emit(EventType.ACTION_RECORDED, action.task_id, action)
    return action


def finish_action(tx: Transaction, action_id: str, completion: Completion) -> Action:
    action = load_action(tx, tx.namespace, action_id)
    complete_action(action, completion, tx.now)
    tx.execute(
        "UPDATE actions SET status = ?, output = ?, error = ?, duration_us = ?, tokens_in = ?, tokens_out = ?,"
        " completed_at = ? WHERE namespace = ? AND id = ?",
        (action.status.value, _json(action.output), action.error, action.duration_us,
         action.tokens_in, action.tokens_out, action.completed_at, action.namespace, action.id))
    touch_task(tx, action.task_id)
    tx.emit(EventType.ACTION_COMPLETED, action.task_id, action)
    return action


def append_log(tx: Transaction, action_id: str, lines: list[tuple[str, str]]) -> tuple[int, int]:
    """Append (stream, content) lines; returns the first and last sequence given."""
    action = load_action(tx, tx.namespace, action_id)
    require_running(action)
    first = action.log_lines + 1
    tx.executemany(
        "INSERT INTO action_logs (namespace, action_id, sequence, stream, content, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(tx.namespace, action_id, first + i, stream, content, tx.now) for i, (stream, content) in enumerate(lines)])
    last = first + len(lines) - 1
    tx.execute("UPDATE actions SET log_lines = ? WHERE namespace = ? AND id = ?",
                     (last, tx.namespace, action_id))
    tx.emit(EventType.ACTION_LOG_APPENDED, action.task_id, None,
                  {"action_id": action_id, "first_sequence": first, "last_sequence": last})
    return first, last
