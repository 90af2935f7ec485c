"""The task-state view as it stood at a past moment (valid time, issue 29), and the versions of that view.

Nothing is copied per write: the task's fields and status, its plan and the plan items' statuses and
claims are folded from the event log (each event's payload is the resource's proto JSON, written by
api/event_encoding.py); state items, waits and artifacts are filtered by the times their rows keep.
"""

from __future__ import annotations

import calendar
import dataclasses
import json
import time
from typing import Any

from taskmem.core.audit import describe_change
from taskmem.core.events import EventType
from taskmem.core.plans import Claim, ItemStatus, Plan, PlanItem
from taskmem.core.tasks import Task, TaskStatus
from taskmem.core.valid_time import Moment, StateVersion
from taskmem.core.waits import Wait, WaitStatus
from taskmem.store.access import Reader
from taskmem.store.tasks.tasks import load_task
from taskmem.store.waits.waits import wait_from_row

TASK_EVENTS = (EventType.TASK_CREATED, EventType.TASK_UPDATED, EventType.TASK_STATUS_CHANGED, EventType.TASK_STUCK,
               EventType.TASK_AUTO_PAUSED, EventType.TASK_AUTO_ARCHIVED)
_PLAN_EVENTS = (EventType.PLAN_REPLACED, EventType.PLAN_ITEM_UPDATED, EventType.PLAN_ITEM_CLAIMED,
                EventType.PLAN_ITEM_CLAIM_RELEASED, EventType.PLAN_ITEM_CLAIM_EXPIRED)
# Every event that can change what GetTaskState shows: each is a version of the task's state.
STATE_EVENTS = (*TASK_EVENTS, *_PLAN_EVENTS, EventType.TASK_STATE_DECISION_ADDED, EventType.TASK_STATE_ERROR_ADDED,
                EventType.STATE_ITEMS_UPSERTED, EventType.STATE_ITEM_UPDATED, EventType.STATE_EXTRACTION_COMPLETED,
                EventType.WAIT_CREATED, EventType.WAIT_RESOLVED, EventType.WAIT_TIMED_OUT, EventType.WAIT_CANCELLED,
                EventType.WAIT_FAILED, EventType.ARTIFACT_REGISTERED, EventType.ARTIFACT_DELETED)


def _event_bound(moment: Moment) -> tuple[str, int]:
    return ("cursor <= ?", moment.cursor) if moment.cursor is not None else ("created_at <= ?", moment.at)


def _task_events(db: Reader, namespace: str, task_id: str, types: tuple[EventType, ...], moment: Moment,
                 newest_only: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """(type, payload) of the task's events of these types up to the moment, oldest first (or the newest)."""
    bound, value = _event_bound(moment)
    rows = db.fetchall(
        f"SELECT type, payload FROM events WHERE namespace = ? AND task_id = ? AND {bound}"
        f" AND type IN ({','.join('?' * len(types))}) ORDER BY cursor {'DESC LIMIT 1' if newest_only else ''}",
        (namespace, task_id, value, *(t.value for t in types)))
    return [(row[0], json.loads(row[1])) for row in rows]


def _plan_item(payload: dict[str, Any]) -> PlanItem:
    return PlanItem(id=payload["id"], ordinal=int(payload.get("ordinal", 0)), title=payload.get("title", ""),
                    status=ItemStatus(payload.get("status", ItemStatus.PENDING.value)),
                    summary=payload.get("summary", ""), active_issue=payload.get("active_issue", ""),
                    depends_on=list(payload.get("depends_on", [])))


def _time_us(text: str) -> int:
    """A proto JSON Timestamp as api/task_convert writes them ("2026-02-16T15:42:00.123456Z") in µs."""
    whole, _, fraction = text.rstrip("Z").partition(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1_000_000 + int(fraction.ljust(6, "0")[:6] or 0)


def task_outline_as_of(db: Reader, namespace: str, task_id: str,
                       moment: Moment) -> tuple[Task, Plan | None] | None:
    """The task and its plan as their events left them at the moment; None before the task existed.
    Raises NotFound for an unknown task."""
    task = load_task(db, namespace, task_id)
    events = _task_events(db, namespace, task_id, TASK_EVENTS, moment, newest_only=True)
    if not events:
        return None
    fields = events[0][1]
    task = dataclasses.replace(task, name=fields.get("name", ""), goal=fields.get("goal", ""),
                               status=TaskStatus(fields["status"]), workspace=fields.get("workspace", ""),
                               plan_version=int(fields.get("plan_version", 0)))
    return task, _plan_as_of(db, namespace, task, moment)


def _plan_as_of(db: Reader, namespace: str, task: Task, moment: Moment) -> Plan | None:
    plan: Plan | None = None
    holders: dict[str, Claim] = {}
    # From the first event on: a claim outlives a replan that keeps its item.
    for kind, payload in _task_events(db, namespace, task.id, _PLAN_EVENTS, moment):
        if kind == EventType.PLAN_REPLACED:
            plan = Plan(task.id, int(payload["version"]), [_plan_item(i) for i in payload.get("items", [])],
                        _time_us(payload["create_time"]), payload.get("reason", ""))
            continue
        if plan is None or int(payload.get("plan_version", plan.version)) != plan.version:
            continue
        found = plan.item(payload["id"])
        if found is not None:
            index = plan.items.index(found)
            plan.items[index] = dataclasses.replace(_plan_item(payload), ordinal=found.ordinal)
        claim = payload.get("claim")
        if kind == EventType.PLAN_ITEM_CLAIMED and claim:
            holders[payload["id"]] = Claim(task.id, payload["id"], claim.get("holder_id", ""),
                                           _time_us(claim["claim_time"]), _time_us(claim["expire_time"]))
        elif kind in (EventType.PLAN_ITEM_CLAIM_RELEASED, EventType.PLAN_ITEM_CLAIM_EXPIRED):
            holders.pop(payload["id"], None)
    if plan is None or plan.version != task.plan_version:
        return None
    for item in plan.items:
        claim = holders.get(item.id)
        if claim is not None and item.status is ItemStatus.IN_PROGRESS:
            item.holder_id = claim.holder
            plan.claims.append(claim)
    return plan


def open_waits_at(db: Reader, namespace: str, task_id: str, at: int, limit: int) -> list[Wait]:
    """The task's waits open at `at`: created by then and not ended by then, newest first."""
    rows = db.fetchall("SELECT * FROM waits WHERE namespace = ? AND task_id = ? AND created_at <= ?"
                       " AND (ended_at IS NULL OR ended_at > ?) ORDER BY created_at DESC, id DESC LIMIT ?",
                       (namespace, task_id, at, at, limit))
    return [dataclasses.replace(wait_from_row(row), status=WaitStatus.WAITING) for row in rows]


def state_versions(db: Reader, namespace: str, task_id: str, before_cursor: int | None,
                   limit: int) -> list[StateVersion]:
    """The versions of a task's state, newest first, starting below before_cursor (None: the newest)."""
    load_task(db, namespace, task_id)
    sql = (f"SELECT cursor, created_at, type, correlation_id, payload, key_id, agent_id FROM events"
           f" WHERE namespace = ? AND task_id = ?"
           f" AND type IN ({','.join('?' * len(STATE_EVENTS))})")
    params: list[Any] = [namespace, task_id, *(t.value for t in STATE_EVENTS)]
    if before_cursor is not None:
        sql += " AND cursor < ?"
        params.append(before_cursor)
    rows = db.fetchall(sql + " ORDER BY cursor DESC LIMIT ?", [*params, limit])
    payloads = [json.loads(row[4]) for row in rows]
    replaced = _replaced_texts(db, namespace, task_id, payloads)
    return [StateVersion(int(row[0]), int(row[1]), row[2], row[3], row[5], row[6],
                         describe_change(row[2], payload, row[5], row[6], replaced.get(payload.get("target_uid", ""), "")))
            for row, payload in zip(rows, payloads)]


def _replaced_texts(db: Reader, namespace: str, thread_id: str, payloads: list[dict[str, Any]]) -> dict[str, str]:
    """The texts of the state items these events' statements superseded, by uid."""
    uids = sorted({p["target_uid"] for p in payloads
                   if p.get("target_uid") and str(p.get("outcome", "")).startswith("supersede")})
    if not uids:
        return {}
    rows = db.fetchall(f"SELECT uid, text FROM state_items WHERE namespace = ? AND thread_id = ?"
                       f" AND uid IN ({', '.join('?' * len(uids))})", [namespace, thread_id, *uids])
    return {str(row[0]): str(row[1]) for row in rows}
