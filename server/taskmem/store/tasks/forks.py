"""ForkTask (issue 28, point 3): a new task begun from another as it stood just after one of its events,
and the lineage through which the fork's transcript and actions continue the original's by reference.

Copied into the fork: the task's fields and status, its plan and the state items (with the links to the
memory entries that stated them) as of the fork point (core/forks says what changes on the way). Not
copied: messages, actions, memory entries and artifacts stay the original's; the fork's reads of its
transcript and actions list the original's up to the fork point, then its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from taskmem.core import forks
from taskmem.core.actions import Action, ActionStatus
from taskmem.core.errors import InvalidArgument
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.messages import Kind, Message
from taskmem.core.plans import Plan
from taskmem.core.tasks import ErrorSummary, Task, TaskStatus
from taskmem.core.valid_time import Moment
from taskmem.store.access import Reader, Transaction
from taskmem.store.state import state_items as item_store
from taskmem.store.state.view_as_of import task_outline_as_of
from taskmem.store.tasks import actions as action_store
from taskmem.store.tasks import messages as message_store
from taskmem.store.tasks.tasks import create_task, load_plan, load_task

T = TypeVar("T")


def fork_point(db: Reader, namespace: str, task_id: str, cursor: int) -> Moment:
    """The moment a fork is taken at: just after the task's event `cursor` (0: its newest event)."""
    if cursor == 0:
        row = db.fetchone("SELECT cursor, created_at FROM events WHERE namespace = ? AND task_id = ?"
                          " ORDER BY cursor DESC LIMIT 1", (namespace, task_id))
        if row is None:
            raise InvalidArgument("at_cursor", f"task {task_id} has no events to fork from")
        return Moment(int(row[1]), int(row[0]))
    row = db.fetchone("SELECT task_id, created_at FROM events WHERE namespace = ? AND cursor = ?", (namespace, cursor))
    if row is None:
        newest = db.fetchone("SELECT max(cursor) FROM events WHERE namespace = ?", (namespace,))
        head = int(newest[0]) if newest and newest[0] is not None else 0
        why = (f"{cursor} is beyond the newest event's cursor {head}" if cursor > head
               else f"no event of task {task_id} has cursor {cursor}")
        raise InvalidArgument("at_cursor", why)
    if row[0] != task_id:
        raise InvalidArgument("at_cursor", f"event {cursor} is {'of task ' + row[0] if row[0] else 'of no task'},"
                                           f" not of {task_id}: fork at one of the task's own events")
    return Moment(int(row[1]), cursor)


def fork_task(tx: Transaction, task_id: str, cursor: int, name: str, name_limit: int) -> tuple[Task, Plan | None]:
    """Create the fork of task_id at cursor (0: now) with its plan and state; emit TASK_FORKED on both tasks.
    The original's rows are only read."""
    original = load_task(tx, tx.namespace, task_id)
    moment = fork_point(tx, tx.namespace, task_id, cursor)
    outline = task_outline_as_of(tx, tx.namespace, task_id, moment)
    if outline is None:  # its creation event was removed
        raise InvalidArgument("at_cursor", f"task {task_id} has no record as of event {moment.cursor}")
    then, plan_then = outline
    fork = _forked_task(tx, original, then, moment, name, name_limit)
    items = []
    if plan_then is not None:
        defined = load_plan(tx, tx.namespace, task_id, plan_then.version)
        items = forks.fork_items(plan_then, defined, moment.at)
    fork, plan = create_task(tx, fork, items, f"forked from {task_id} at cursor {moment.cursor}")
    _copy_state(tx, task_id, fork.id, moment.at)
    tx.emit(EventType.TASK_FORKED, task_id, fork)
    tx.emit(EventType.TASK_FORKED, fork.id, fork)
    return fork, plan


def _forked_task(tx: Transaction, original: Task, then: Task, moment: Moment, name: str, name_limit: int) -> Task:
    status = forks.fork_status(then.status)

    def by_then(at: int | None) -> int | None:
        return at if at is not None and at <= moment.at else None

    finished = forks.is_finished(status)
    return dataclasses.replace(
        original, id=new_id("tsk"), name=forks.fork_name(name, then.name, name_limit), goal=then.goal,
        status=status, workspace=then.workspace, plan_version=0, revision=1, created_at=tx.now, updated_at=tx.now,
        paused_from=TaskStatus.EXECUTING if status is TaskStatus.PAUSED else None,
        paused_at=tx.now if status is TaskStatus.PAUSED else None, plan_generated_at=None,
        execution_started_at=by_then(original.execution_started_at),
        synthesis_started_at=by_then(original.synthesis_started_at),
        completed_at=by_then(original.completed_at) if finished else None,
        archived_at=by_then(original.archived_at) if status is TaskStatus.ARCHIVED else None,
        final_answer=original.final_answer if finished else "",
        error_summary=original.error_summary if finished else ErrorSummary(),
        forked_from=original.id, forked_at=moment.cursor or 0)


def _copy_state(tx: Transaction, original_id: str, fork_id: str, at: int) -> None:
    """The original thread's state items as they stood at `at` (superseded ones too, for the supersession
    links), their embeddings, and their links to the (original's) memory entries that stated them."""
    for item in item_store.thread_items(tx, tx.namespace, original_id, at=at):
        item_store.save_item(tx, dataclasses.replace(item, thread_id=fork_id))
    copied = "uid IN (SELECT uid FROM state_items WHERE namespace = ? AND thread_id = ?)"
    tx.execute("INSERT INTO state_item_embeddings (namespace, thread_id, uid, model, vector, created_at)"
               " SELECT namespace, ?, uid, model, vector, created_at FROM state_item_embeddings"
               f" WHERE namespace = ? AND thread_id = ? AND {copied}",
               (fork_id, tx.namespace, original_id, tx.namespace, fork_id))
    tx.execute("INSERT INTO state_item_entries (namespace, thread_id, uid, memory_entry_id, kind, subtask_id, detail,"
               " created_at) SELECT namespace, ?, uid, memory_entry_id, kind, subtask_id, detail, created_at"
               f" FROM state_item_entries WHERE namespace = ? AND thread_id = ? AND created_at <= ? AND {copied}",
               (fork_id, tx.namespace, original_id, at, tx.namespace, fork_id))


# --- history by reference ----------------------------------------------------------------------

def lineage(db: Reader, namespace: str, task_id: str) -> list[tuple[str, int | None]]:
    """(task id, the last moment of its history that counts, None: all of it) of the task and the tasks it was
    forked from, the first original first. Raises NotFound for an unknown task."""
    task = load_task(db, namespace, task_id)
    chain: list[tuple[str, int | None]] = [(task.id, None)]
    until: int | None = None
    seen = {task.id}
    while task.forked_from and task.forked_from not in seen:
        row = db.fetchone("SELECT created_at FROM events WHERE namespace = ? AND cursor = ?",
                          (namespace, task.forked_at))
        point = int(row[0]) if row else task.created_at
        until = point if until is None else min(until, point)
        task = load_task(db, namespace, task.forked_from)
        seen.add(task.id)
        chain.append((task.id, until))
    return chain[::-1]


def _through_lineage(chain: list[tuple[str, int | None]], after_key: list[Any] | None, limit: int,
                     fetch: Callable[[str, list[Any] | None, int], list[T]], time_of: Callable[[T], int]) -> list[T]:
    """One page (oldest first) of entries along the chain: each ancestor's up to its moment, then the next's.
    Keys grow along the chain (a fork's entries are written after its fork point), so one after_key serves."""
    page: list[T] = []
    for task_id, until in chain:
        if len(page) >= limit:
            break
        found = fetch(task_id, after_key, limit - len(page))
        page.extend(found if until is None else [entry for entry in found if time_of(entry) <= until])
    return page


def list_task_messages(db: Reader, namespace: str, task_id: str, thread_id: str, kinds: list[Kind],
                       after_key: list[Any] | None, limit: int) -> list[Message]:
    """ListMessages: a task's thread continues the threads it was forked from (a standalone thread is itself)."""
    if not task_id:
        return message_store.list_messages(db, namespace, task_id, thread_id, kinds, after_key, limit)
    return _through_lineage(
        lineage(db, namespace, task_id), after_key, limit,
        lambda tid, after, n: message_store.list_messages(db, namespace, tid, tid, kinds, after, n),
        lambda message: message.created_at)


def list_task_actions(db: Reader, namespace: str, task_id: str, plan_item_id: str, after_key: list[Any] | None,
                      limit: int, statuses: list[ActionStatus]) -> list[Action]:
    """ListActions: a task's actions continue those of the tasks it was forked from."""
    return _through_lineage(
        lineage(db, namespace, task_id), after_key, limit,
        lambda tid, after, n: action_store.list_actions(db, namespace, tid, plan_item_id, after, n, statuses),
        lambda action: action.created_at)
