"""What a scoped key's check reads (api/task_access.py): who created a task and its labels, and the task an
action or a wait belongs to. Each answers None for what the namespace does not hold."""

from __future__ import annotations

import dataclasses
import json

from taskmem.core.access import task_labels
from taskmem.store.access import Reader, Transaction


@dataclasses.dataclass(frozen=True)
class TaskOwnership:
    creator_key_id: str
    labels: frozenset[str]


def record_creator(tx: Transaction, task_id: str) -> None:
    """Remember the key a new task is created with (none for a server without keys)."""
    if tx.actor.key_id:
        tx.defer("task_creators", "INSERT INTO task_creators (namespace, task_id, key_id) VALUES (?, ?, ?)",
                 (tx.namespace, task_id, tx.actor.key_id))


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
