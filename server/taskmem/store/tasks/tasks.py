"""Tasks and their versioned plans: rows, reads and the mutations that change them."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from taskmem.core.claims import Claim
from taskmem.core.errors import NotFound
from taskmem.core.events import EventType
from taskmem.core.plan_inference import ItemOutline
from taskmem.core.plans import (ITEM_AWAITING_PERSON, ItemStatus, Plan, PlanItem, StatusSource, StepQuestion, carry_over,
                                set_item_status)
from taskmem.core.tasks import (
    AWAITING_PERSON, ApprovalMode, ErrorSummary, Task, TaskStatus, apply_task_changes, check_etag, set_status_for_person_wait,
)
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction

_TASK_COLUMNS = (
    "namespace", "id", "name", "goal", "status", "paused_from", "workspace", "context", "metadata",
    "approval_mode", "callback_url", "final_answer", "error_summary", "plan_version", "revision",
    "created_at", "plan_generated_at", "execution_started_at", "synthesis_started_at", "completed_at",
    "paused_at", "archived_at", "updated_at", "plan_inference_disabled", "webhook_event_types", "forked_from",
    "forked_at",
)
_ITEM_COLUMNS = (
    "namespace", "task_id", "plan_version", "id", "ordinal", "stage", "title", "status", "summary",
    "active_issue", "depends_on", "tool_name", "input", "narrative", "started_at", "completed_at", "duration_us",
    "status_source", "status_message_id", "question_message_id", "question_evidence", "question_reason",
)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


def task_from_row(row: Row) -> Task:
    return Task(
        namespace=row["namespace"], id=row["id"], name=row["name"], goal=row["goal"],
        status=TaskStatus(row["status"]), paused_from=TaskStatus(row["paused_from"]) if row["paused_from"] else None,
        workspace=row["workspace"], context=json.loads(row["context"]), metadata=json.loads(row["metadata"]),
        approval_mode=ApprovalMode(row["approval_mode"]), callback_url=row["callback_url"],
        final_answer=row["final_answer"], error_summary=ErrorSummary(**json.loads(row["error_summary"])),
        plan_version=row["plan_version"], revision=row["revision"], created_at=row["created_at"],
        plan_generated_at=row["plan_generated_at"], execution_started_at=row["execution_started_at"],
        synthesis_started_at=row["synthesis_started_at"], completed_at=row["completed_at"],
        paused_at=row["paused_at"], archived_at=row["archived_at"], updated_at=row["updated_at"],
        plan_inference_disabled=bool(row["plan_inference_disabled"]),
        webhook_event_types=json.loads(row["webhook_event_types"]), forked_from=row["forked_from"],
        forked_at=int(row["forked_at"]),
    )


def _task_values(task: Task) -> tuple[Any, ...]:
    return (
        task.namespace, task.id, task.name, task.goal, task.status.value,
        task.paused_from.value if task.paused_from else "", task.workspace, _dumps(task.context),
        _dumps(task.metadata), task.approval_mode.value, task.callback_url, task.final_answer,
        _dumps(dataclasses.asdict(task.error_summary)), task.plan_version, task.revision, task.created_at,
        task.plan_generated_at, task.execution_started_at, task.synthesis_started_at, task.completed_at,
        task.paused_at, task.archived_at, task.updated_at, int(task.plan_inference_disabled),
        _dumps(task.webhook_event_types), task.forked_from, task.forked_at,
    )


def item_from_row(row: Row) -> PlanItem:
    return PlanItem(
        id=row["id"], ordinal=row["ordinal"], stage=row["stage"], title=row["title"],
        status=ItemStatus(row["status"]), summary=row["summary"], active_issue=row["active_issue"],
        depends_on=json.loads(row["depends_on"]), tool_name=row["tool_name"], input=json.loads(row["input"]),
        narrative=row["narrative"], started_at=row["started_at"], completed_at=row["completed_at"],
        duration_us=row["duration_us"], status_source=StatusSource(row["status_source"]),
        status_message_id=row["status_message_id"],
        question=StepQuestion(row["question_message_id"], row["question_evidence"], row["question_reason"])
        if row["question_message_id"] else None,
    )


def _item_values(namespace: str, task_id: str, version: int, item: PlanItem) -> tuple[Any, ...]:
    return (
        namespace, task_id, version, item.id, item.ordinal, item.stage, item.title, item.status.value,
        item.summary, item.active_issue, _dumps(item.depends_on), item.tool_name, _dumps(item.input),
        item.narrative, item.started_at, item.completed_at, item.duration_us, item.status_source.value,
        item.status_message_id, *_question_values(item),
    )


def _question_values(item: PlanItem) -> tuple[str, str, str]:
    q = item.question
    return (q.message_id, q.evidence, q.reason) if q is not None else ("", "", "")


_INSERT_TASK = (f"INSERT INTO tasks ({', '.join(_TASK_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(_TASK_COLUMNS))})")
_SAVE_TASK = (f"UPDATE tasks SET ({', '.join(_TASK_COLUMNS[2:])}) = ({', '.join('?' * (len(_TASK_COLUMNS) - 2))})"
              " WHERE namespace = ? AND id = ?")
_INSERT_ITEM = (f"INSERT INTO plan_items ({', '.join(_ITEM_COLUMNS)})"
                f" VALUES ({', '.join('?' * len(_ITEM_COLUMNS))})")
_SAVE_ITEM = ("UPDATE plan_items SET status = ?, summary = ?, active_issue = ?, started_at = ?,"
              " completed_at = ?, duration_us = ?, status_source = ?, status_message_id = ?,"
              " question_message_id = ?, question_evidence = ?, question_reason = ?"
              " WHERE namespace = ? AND task_id = ? AND plan_version = ? AND id = ?")


# --- reads (any Reader: the read pool or an open Transaction) ---------------------------------

def find_task(db: Reader, namespace: str, task_id: str) -> Task | None:
    row = db.fetchone(f"SELECT * FROM tasks WHERE namespace = ? AND id = ?{db.row_lock}", (namespace, task_id))
    return task_from_row(row) if row else None


def load_task(db: Reader, namespace: str, task_id: str) -> Task:
    task = find_task(db, namespace, task_id)
    if task is None:
        raise NotFound("task", task_id)
    return task


def load_plan(db: Reader, namespace: str, task_id: str, version: int) -> Plan | None:
    header = db.fetchone("SELECT * FROM plans WHERE namespace = ? AND task_id = ? AND version = ?",
                               (namespace, task_id, version))
    if header is None:
        return None
    rows = db.fetchall(
        "SELECT * FROM plan_items WHERE namespace = ? AND task_id = ? AND plan_version = ? ORDER BY ordinal",
        (namespace, task_id, version))
    plan = Plan(task_id, version, [item_from_row(r) for r in rows], header["created_at"], header["reason"])
    plan.claims = held_claims(db, namespace, plan)
    return plan


def claim_from_row(task_id: str, row: Row) -> Claim:
    return Claim(task_id, row["item_id"], row["holder"], int(row["claimed_at"]), int(row["expires_at"]))


def task_claims(db: Reader, namespace: str, task_id: str) -> dict[str, Claim]:
    """Every stored claim of the task (store/plan_claims) by item id, expired ones too until they are swept."""
    rows = db.fetchall("SELECT item_id, holder, claimed_at, expires_at FROM plan_item_claims"
                       " WHERE namespace = ? AND task_id = ?", (namespace, task_id))
    return {row["item_id"]: claim_from_row(task_id, row) for row in rows}


def held_claims(db: Reader, namespace: str, plan: Plan) -> list[Claim]:
    """The claims of the plan's IN_PROGRESS items in plan order, each item's holder_id filled in. A claim
    past its lease still shows until the sweeper (or the task's next claim or update) ends it."""
    claims = task_claims(db, namespace, plan.task_id)
    held = []
    for item in plan.items:
        claim = claims.get(item.id)
        if claim is not None and item.status is ItemStatus.IN_PROGRESS:
            item.holder_id = claim.holder
            held.append(claim)
    return held


def load_plan_outline(db: Reader, namespace: str, task_id: str, version: int) -> list[ItemOutline]:
    """The items of a plan version with only id, ordinal, title, status (and its source) and dependencies.

    What plan-progress inference reads for each message that may finish a step, at a fraction
    of the cost of load_plan, which decodes every column into a PlanItem.
    """
    rows = db.fetchall(
        "SELECT id, ordinal, title, status, status_source, depends_on FROM plan_items"
        " WHERE namespace = ? AND task_id = ? AND plan_version = ? ORDER BY ordinal", (namespace, task_id, version))
    return [ItemOutline(r[0], r[1], r[2], _STATUSES[r[3]], _SOURCES[r[4]], json.loads(r[5]) if r[5] != "[]" else [])
            for r in rows]


# Dict lookups: 4x cheaper than calling the enum, on a path run for every progress message.
_STATUSES = {status.value: status for status in ItemStatus}
_SOURCES = {source.value: source for source in StatusSource}


def load_plan_item(db: Reader, namespace: str, task_id: str, version: int, item_id: str) -> PlanItem | None:
    row = db.fetchone("SELECT * FROM plan_items WHERE namespace = ? AND task_id = ? AND plan_version = ? AND id = ?",
                      (namespace, task_id, version, item_id))
    return item_from_row(row) if row else None


def load_task_with_plan(db: Reader, namespace: str, task_id: str, version: int) -> tuple[Task, Plan | None]:
    """A task and one plan version of it (0: the current one; None when it has no such plan)."""
    task = load_task(db, namespace, task_id)
    version = version or task.plan_version
    return task, load_plan(db, namespace, task_id, version) if version else None


# Spelled out as literals, as the partial indexes of migration 0022 (PostgreSQL 0011) are, so that both
# planners use them: a bound parameter cannot show that a row satisfies an index's WHERE.
_TASK_AWAITING = f"status IN ({', '.join(repr(s.value) for s in sorted(AWAITING_PERSON))})"
_ITEM_AWAITING = f"i.status IN ({', '.join(repr(s.value) for s in sorted(ITEM_AWAITING_PERSON))})"


def list_tasks(db: Reader, namespace: str, statuses: list[TaskStatus], updated_after: int | None,
                     after_key: list[Any] | None, limit: int, awaiting_person: bool = False) -> list[Task]:
    """Most recently updated first; after_key is the (updated_at, id) of the previous page's last task.
    awaiting_person: only tasks waiting on a person, themselves or through an item of their current plan."""
    query = (PageQuery("tasks", order=("updated_at DESC", "id DESC"))
             .equals("namespace", namespace).any_of("status", (s.value for s in statuses)))
    if updated_after is not None:
        query.where("updated_at > ?", updated_after)
    if awaiting_person:
        query.where(f"id IN (SELECT id FROM tasks WHERE namespace = ? AND {_TASK_AWAITING}"
                    f" UNION SELECT i.task_id FROM plan_items i JOIN tasks t ON t.namespace = i.namespace"
                    f" AND t.id = i.task_id AND t.plan_version = i.plan_version WHERE i.namespace = ? AND {_ITEM_AWAITING})",
                    namespace, namespace)
    return [task_from_row(row) for row in query.after(after_key).fetch(db, limit)]


# --- mutations (inside the writer's Transaction) ----------------------------------------------

_TOUCH = "UPDATE tasks SET updated_at = ?, revision = revision + ? WHERE namespace = ? AND id = ?"


def _both_touches(earlier: Sequence[Any], later: Sequence[Any]) -> Sequence[Any]:
    return (max(earlier[0], later[0]), earlier[1] + later[1], *later[2:])


def touch_task(tx: Transaction, task_id: str) -> int:
    """Record that something under the task changed (new update time and etag); returns its plan version.

    The task's row is read once per batch (while no mutation writes directly) and its update deferred,
    so the touches of a batch's mutations become one UPDATE that adds each to the revision."""
    key = ("task plan version", tx.namespace, task_id)
    version: int | None = tx.memo.get(key)
    if version is None:
        row = tx.fetchone("SELECT plan_version FROM tasks WHERE namespace = ? AND id = ?" + tx.row_lock,
                          (tx.namespace, task_id))
        if row is None:
            raise NotFound("task", task_id)
        version = tx.memo[key] = int(row["plan_version"])
    tx.defer("tasks", _TOUCH, (tx.now, 1, tx.namespace, task_id), key, _both_touches)
    return version


def _store_plan(tx: Transaction, task: Task, items: list[PlanItem], reason: str) -> Plan:
    previous = load_plan(tx, task.namespace, task.id, task.plan_version) if task.plan_version else None
    plan = Plan(task.id, task.plan_version + 1, carry_over(previous, items), tx.now, reason)
    tx.execute("INSERT INTO plans (namespace, task_id, version, reason, created_at) VALUES (?, ?, ?, ?, ?)",
                     (task.namespace, task.id, plan.version, reason, tx.now))
    tx.executemany(_INSERT_ITEM, [_item_values(task.namespace, task.id, plan.version, i) for i in plan.items])
    task.plan_version = plan.version
    if task.plan_generated_at is None:
        task.plan_generated_at = tx.now
    return plan


def _record_creator(tx: Transaction, task_id: str) -> None:
    """Remember the key a new task is created with (store/tasks/task_access.py reads it for scoped keys)."""
    if tx.actor.key_id:
        tx.defer("task_creators", "INSERT INTO task_creators (namespace, task_id, key_id) VALUES (?, ?, ?)",
                 (tx.namespace, task_id, tx.actor.key_id))


def create_task(tx: Transaction, task: Task, items: list[PlanItem],
                reason: str = "initial plan") -> tuple[Task, Plan | None]:
    plan = _store_plan(tx, task, items, reason) if items else None
    tx.execute(_INSERT_TASK, _task_values(task))
    _record_creator(tx, task.id)
    tx.emit(EventType.TASK_CREATED, task.id, task)
    if plan is not None:
        tx.emit(EventType.PLAN_REPLACED, task.id, plan)
    return task, plan


def update_task(tx: Transaction, task_id: str, changes: dict[str, Any], etag: str) -> Task:
    task = load_task(tx, tx.namespace, task_id)
    check_etag(task, etag)
    return _save_changes(tx, task, changes)


def update_task_metadata(tx: Transaction, task_id: str, change: Callable[[dict[str, Any]], dict[str, Any]]) -> Task:
    """Replace the task's metadata with change(current metadata), reading the task once."""
    task = load_task(tx, tx.namespace, task_id)
    return _save_changes(tx, task, {"metadata": change(task.metadata)})


def _save_changes(tx: Transaction, task: Task, changes: dict[str, Any]) -> Task:
    previous = apply_task_changes(task, changes, tx.now)
    values = _task_values(task)
    tx.execute(_SAVE_TASK, (*values[2:], task.namespace, task.id))
    if previous is not None:
        tx.emit(EventType.TASK_STATUS_CHANGED, task.id, task,
                      {"from": previous.value, "to": task.status.value})
    if set(changes) - {"status"} or previous is None:
        tx.emit(EventType.TASK_UPDATED, task.id, task)
    return task


def set_task_status_for_person_wait(tx: Transaction, task_id: str, status: TaskStatus) -> Task:
    """Move the task into or out of INPUT_REQUIRED / AUTH_REQUIRED (store/waits/person_waits), with its event."""
    task = load_task(tx, tx.namespace, task_id)
    previous = set_status_for_person_wait(task, status, tx.now)
    if previous is not None:
        tx.execute(_SAVE_TASK, (*_task_values(task)[2:], task.namespace, task.id))
        tx.emit(EventType.TASK_STATUS_CHANGED, task.id, task, {"from": previous.value, "to": task.status.value})
    return task


def replace_plan(tx: Transaction, task_id: str, items: list[PlanItem], reason: str) -> Plan:
    task = load_task(tx, tx.namespace, task_id)
    plan = _store_plan(tx, task, items, reason)
    task.updated_at, task.revision = tx.now, task.revision + 1
    tx.execute(
        "UPDATE tasks SET plan_version = ?, plan_generated_at = ?, updated_at = ?, revision = ?"
        " WHERE namespace = ? AND id = ?",
        (task.plan_version, task.plan_generated_at, task.updated_at, task.revision, task.namespace, task.id))
    tx.emit(EventType.PLAN_REPLACED, task.id, plan)
    return plan


def update_plan_item(tx: Transaction, task_id: str, item_id: str, status: ItemStatus | None,
                     summary: str | None, active_issue: str | None, dismiss_question: bool = False) -> PlanItem:
    """A caller's change to an item. A status the caller sets, or dismiss_question, answers the item's
    "may be finished" question: it leaves every view."""
    version = touch_task(tx, task_id)
    row = tx.fetchone(
        "SELECT * FROM plan_items WHERE namespace = ? AND task_id = ? AND plan_version = ? AND id = ?",
        (tx.namespace, task_id, version, item_id)) if version else None
    if row is None:
        raise NotFound("plan item", item_id)
    item = item_from_row(row)
    if status is not None:
        set_item_status(item, status, tx.now)
        item.status_source, item.status_message_id = StatusSource.EXPLICIT, ""  # a caller's word beats inference
    if status is not None or dismiss_question:
        item.question = None
    if summary is not None:
        item.summary = summary
    if active_issue is not None:
        item.active_issue = active_issue
    save_plan_item(tx, task_id, version, item)
    tx.emit(EventType.PLAN_ITEM_UPDATED, task_id, item, {"plan_version": version})
    return item


def save_plan_item(tx: Transaction, task_id: str, version: int, item: PlanItem) -> None:
    """Write an item's changeable fields (status and its times and source, summary, issue)."""
    tx.execute(_SAVE_ITEM, (item.status.value, item.summary, item.active_issue, item.started_at,
                            item.completed_at, item.duration_us, item.status_source.value, item.status_message_id,
                            *_question_values(item),
                            tx.namespace, task_id, version, item.id))
