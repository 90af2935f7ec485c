"""Waits: rows, reads, and the mutations that open and end them.

Every outcome is written in one transaction with its consequences: the wait row,
its event, and for a wait linked to a task the "[Wait …]" system message in the
task's thread and the task's metadata keys (active_wait_ids, last_wait_state,
last_wait_event_at).
"""

from __future__ import annotations

import copy
import json
import os
import posixpath
from typing import Any

from taskmem.core.errors import FailedPrecondition, NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.messages import Kind, Message, Role
from taskmem.core.person_waits import answer_message, person_target, question_message, same_subject
from taskmem.core.tasks import TaskStatus
from taskmem.core.waits import (
    END_EVENTS, EventTarget, FileTarget, TaskStatusTarget, Wait, WaitStatus, check_below_roots, end_wait,
    metadata_after, outcome_message, resolve_in_workspace, started_message, target_from_json, target_to_json,
    task_status_outcome,
)
from taskmem.store.tasks import tasks as task_store
from taskmem.store.waits import person_waits
from taskmem.store.tasks.messages import insert_message
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction

_COLUMNS = (
    "namespace", "id", "task_id", "criteria", "kind", "target", "status", "result", "timeout_us",
    "poll_interval_us", "start_cursor", "correlation_id", "forced", "created_at", "ended_at",
)
_INSERT = f"INSERT INTO waits ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def wait_from_row(row: Row) -> Wait:
    return Wait(
        namespace=row["namespace"], id=row["id"], task_id=row["task_id"], criteria=row["criteria"],
        target=target_from_json(row["kind"], json.loads(row["target"])), status=WaitStatus(row["status"]),
        result=row["result"], timeout_us=row["timeout_us"], poll_interval_us=row["poll_interval_us"],
        start_cursor=row["start_cursor"], correlation_id=row["correlation_id"], forced=bool(row["forced"]),
        created_at=row["created_at"], ended_at=row["ended_at"],
    )


def _values(wait: Wait) -> tuple[Any, ...]:
    return (
        wait.namespace, wait.id, wait.task_id, wait.criteria, wait.kind,
        json.dumps(target_to_json(wait.target), separators=(",", ":"), allow_nan=False), wait.status.value,
        wait.result, wait.timeout_us, wait.poll_interval_us, wait.start_cursor, wait.correlation_id,
        int(wait.forced), wait.created_at, wait.ended_at,
    )


# --- reads --------------------------------------------------------------------------------------

def load_wait(db: Reader, namespace: str, wait_id: str) -> Wait:
    row = db.fetchone(f"SELECT * FROM waits WHERE namespace = ? AND id = ?{db.row_lock}", (namespace, wait_id))
    if row is None:
        raise NotFound("wait", wait_id)
    return wait_from_row(row)


def list_waits(db: Reader, namespace: str, task_id: str, statuses: list[WaitStatus],
               before_key: list[Any] | None, limit: int) -> list[Wait]:
    """Newest first by (created_at, id); before_key is the previous page's last (created_at, id)."""
    rows = (PageQuery("waits", order=("created_at DESC", "id DESC"))
            .equals("namespace", namespace).equals("task_id", task_id)
            .any_of("status", (s.value for s in statuses)).after(before_key).fetch(db, limit))
    return [wait_from_row(row) for row in rows]


def open_waits(db: Reader) -> list[Wait]:
    """Every WAITING wait of every namespace (the scheduler's start-up load)."""
    rows = db.fetchall("SELECT * FROM waits WHERE status = ?", (WaitStatus.WAITING.value,))
    return [wait_from_row(row) for row in rows]


def open_person_waits(db: Reader, wait: Wait) -> list[Wait]:
    """The other WAITING waits on a person about the same task or plan item as `wait`."""
    rows = db.fetchall("SELECT * FROM waits WHERE namespace = ? AND task_id = ? AND kind = ? AND status = ? AND id <> ?",
                       (wait.namespace, wait.task_id, "external", WaitStatus.WAITING.value, wait.id))
    return [other for other in map(wait_from_row, rows) if same_subject(wait, other)]


def task_status_of(db: Reader, namespace: str, task_id: str) -> str | None:
    row = db.fetchone("SELECT status FROM tasks WHERE namespace = ? AND id = ?", (namespace, task_id))
    return str(row["status"]) if row else None


# --- mutations ----------------------------------------------------------------------------------

def _record_on_task(tx: Transaction, wait: Wait, content: str, role: Role = Role.SYSTEM) -> None:
    """The message in the linked task's thread, and its wait metadata keys."""
    # The metadata update touches the task, so the message need not.
    insert_message(tx, Message(tx.namespace, new_id("msg"), wait.task_id, role, Kind.WAIT, content, tx.now,
                               wait.task_id))
    task_store.update_task_metadata(tx, wait.task_id, lambda metadata: metadata_after(metadata, wait, tx.now))


def _end(tx: Transaction, wait: Wait, status: WaitStatus, result: str, forced: bool = False) -> Wait:
    end_wait(wait, status, result, tx.now, forced=forced)
    tx.execute("UPDATE waits SET status = ?, result = ?, ended_at = ?, forced = ? WHERE namespace = ? AND id = ?",
               (wait.status.value, wait.result, wait.ended_at, int(wait.forced), wait.namespace, wait.id))
    tx.emit(END_EVENTS[status], wait.task_id, wait)
    if wait.task_id:
        _record_ending(tx, wait)
    return wait


def _record_ending(tx: Transaction, wait: Wait) -> None:
    """The outcome in the linked task's thread (a person's answer as their message), and the status of a
    task or item that waited on a person."""
    if person_target(wait) is not None:
        # The task's row is locked before the other open waits are read: with replicas, an answer to another of
        # its waits that committed meanwhile is then seen, so whichever ends last moves the task on.
        task = task_store.find_task(tx, tx.namespace, wait.task_id)
        if task is not None:
            person_waits.leave(tx, task, wait, open_person_waits(tx, wait))
    role, content = answer_message(wait) or (Role.SYSTEM, outcome_message(wait))
    _record_on_task(tx, wait, content, role)


def create_wait(tx: Transaction, wait: Wait, file_roots: tuple[str, ...] = ()) -> Wait:
    """Store a new WAITING wait; a task_status target that already holds ends it at once.

    A file target's path must lie below one of file_roots (the namespace's wait_file_roots), both as
    written and with its symbolic links followed, so a link cannot lead into another namespace's folder."""
    task = task_store.load_task(tx, tx.namespace, wait.task_id) if wait.task_id else None
    target = wait.target
    if isinstance(target, FileTarget):
        workspace = task.workspace if task is not None else ""
        target.resolved = resolve_in_workspace("target.file.path", workspace, target.path)
        for path in dict.fromkeys((target.resolved, _links_followed("target.file.path", target.resolved))):
            check_below_roots("target.file.path", path, file_roots, tx.namespace)
        target.workspace = posixpath.normpath(workspace)
    watched_status = None
    if isinstance(target, (TaskStatusTarget, EventTarget)):
        watched_status = task_status_of(tx, tx.namespace, target.task_id)
        if watched_status is None:
            raise NotFound("task", target.task_id)
        row = tx.fetchone("SELECT coalesce(max(cursor), 0) AS c FROM events")
        wait.start_cursor = int(row["c"]) if row else 0
    if task is not None and person_target(wait) is not None:
        person_waits.enter(tx, task, wait, open_person_waits(tx, wait))
        tx.execute(_INSERT, _values(wait))
        tx.emit(EventType.WAIT_CREATED, wait.task_id, wait)
        role, question = question_message(wait)
        _record_on_task(tx, wait, question, role)
        return wait
    tx.execute(_INSERT, _values(wait))
    tx.emit(EventType.WAIT_CREATED, wait.task_id, wait)
    if wait.task_id:
        _record_on_task(tx, wait, started_message(wait))
    if isinstance(target, TaskStatusTarget) and watched_status is not None:
        outcome = task_status_outcome(target, TaskStatus(watched_status))
        if outcome is not None:
            _end(tx, wait, *outcome)
    return wait


# A path being swapped for a symbolic link while it is resolved makes realpath fail (readlink on what lstat saw
# as a link: EINVAL); a few tries ride out a single swap, a path that keeps changing is refused.
_REALPATH_TRIES = 3


def _links_followed(field: str, path: str) -> str:
    """path with its symbolic links followed; FAILED_PRECONDITION naming field if it keeps changing meanwhile."""
    for attempt in range(1, _REALPATH_TRIES + 1):
        try:
            return os.path.realpath(path)
        except OSError as error:
            if attempt == _REALPATH_TRIES:
                raise FailedPrecondition(
                    f"{field}: {path} changed while its symbolic links were being followed ({error.strerror}); "
                    "create the wait again once it stays put", field=field) from None
    raise AssertionError("unreachable")


def end_waits(tx: Transaction, endings: list[tuple[Wait, WaitStatus, str]]) -> list[Wait]:
    """The scheduler's batch: end each wait that is still WAITING in the database, skip the others.

    Many timers coming due together end in one mutation with two statements, not a
    read, a write and a savepoint each. Each outcome's events carry the correlation
    id of the request that created its wait.
    """
    ids = [wait.id for wait, _, _ in endings]
    # With row_lock, a replica ending the same waits at once waits here, then finds them ended.
    rows = tx.fetchall(f"SELECT id FROM waits WHERE namespace = ? AND status = ? AND id IN ({','.join('?' * len(ids))})"
                       f"{tx.row_lock}", (tx.namespace, WaitStatus.WAITING.value, *ids))
    waiting = {row["id"] for row in rows}  # the others ended meanwhile (cancelled or resolved by a caller)
    ended = []
    for known, status, result in endings:
        if known.id in waiting:
            wait = copy.copy(known)
            end_wait(wait, status, result, tx.now)
            ended.append(wait)
    tx.executemany("UPDATE waits SET status = ?, result = ?, ended_at = ? WHERE namespace = ? AND id = ?",
                   [(w.status.value, w.result, w.ended_at, tx.namespace, w.id) for w in ended])
    correlation_id = tx.correlation_id
    for wait in ended:
        tx.correlation_id = wait.correlation_id
        tx.emit(END_EVENTS[wait.status], wait.task_id, wait)
        if wait.task_id:
            _record_ending(tx, wait)
    tx.correlation_id = correlation_id
    return ended


def finish_wait(tx: Transaction, wait_id: str, status: WaitStatus, result: str, *, forced: bool = False) -> Wait:
    """End a WAITING wait; FAILED_PRECONDITION if it has already ended, NOT_FOUND if there is none."""
    return _end(tx, load_wait(tx, tx.namespace, wait_id), status, result, forced)


def wait_counts(db: Reader) -> list[tuple[str, str, int]]:
    """(kind, status, count) over every namespace, for the waits metric."""
    rows = db.fetchall("SELECT kind, status, count(*) AS n FROM waits GROUP BY kind, status")
    return [(row["kind"], row["status"], row["n"]) for row in rows]
