"""What a scoped key's check reads (api/task_access.py): who created a task and its labels, and the task an
action or a wait belongs to. Each answers None for what the namespace does not hold."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from taskmem.core.access import TaskScope, task_labels
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.access import Reader
from taskmem.store.tasks.tasks import list_tasks


@dataclasses.dataclass(frozen=True)
class TaskOwnership:
    creator_key_id: str
    labels: frozenset[str]


def task_ownership(db: Reader, namespace: str, task_id: str) -> TaskOwnership | None:
    row = db.fetchone("SELECT t.metadata, c.key_id FROM tasks t LEFT JOIN task_creators c"
                      " ON c.namespace = t.namespace AND c.task_id = t.id WHERE t.namespace = ? AND t.id = ?",
                      (namespace, task_id))
    if row is None:
        return None
    metadata = json.loads(row[0]) if row[0] else {}
    return TaskOwnership(row[1] or "", task_labels(metadata if isinstance(metadata, dict) else {}))


def task_of_action(db: Reader, namespace: str, action_id: str) -> str | None:
    row = db.fetchone("SELECT task_id FROM actions WHERE namespace = ? AND id = ?", (namespace, action_id))
    return str(row[0]) if row is not None else None


def task_of_wait(db: Reader, namespace: str, wait_id: str) -> str | None:
    row = db.fetchone("SELECT task_id FROM waits WHERE namespace = ? AND id = ?", (namespace, wait_id))
    return str(row[0]) if row is not None else None


def _creators(db: Reader, namespace: str, task_ids: list[str]) -> dict[str, str]:
    if not task_ids:
        return {}
    rows = db.fetchall(f"SELECT task_id, key_id FROM task_creators WHERE namespace = ?"
                       f" AND task_id IN ({', '.join('?' * len(task_ids))})", [namespace, *task_ids])
    return {str(row[0]): str(row[1]) for row in rows}


def visible_tasks(db: Reader, namespace: str, statuses: list[TaskStatus], updated_after: int | None,
                  after: list[Any] | None, limit: int, awaiting_person: bool, scope: TaskScope,
                  key_id: str) -> list[Task]:
    """ListTasks for a scoped key: up to `limit` tasks of its scope in the list's order, read page by page
    past the tasks it may not see (all in one snapshot)."""
    found: list[Task] = []
    while len(found) < limit:
        rows = list_tasks(db, namespace, statuses, updated_after, after, limit, awaiting_person)
        creators = _creators(db, namespace, [task.id for task in rows])
        found.extend(task for task in rows
                     if scope.holds(task.id, creators.get(task.id, ""), task_labels(task.metadata), key_id))
        if len(rows) < limit:
            break
        after = [rows[-1].updated_at, rows[-1].id]
    return found[:limit]
