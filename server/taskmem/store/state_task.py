"""What the task-state view, BuildContext and QueryTask read about a task, each in one reader call."""

from __future__ import annotations

import dataclasses

from taskmem.core.messages import Message
from taskmem.core.plans import Plan
from taskmem.core.state_records import StoredStateItem
from taskmem.core.tasks import Task
from taskmem.store import messages as message_store
from taskmem.store.messages import message_from_row
from taskmem.store import state_items as item_store
from taskmem.store.state_summaries import RunningSummary, running_summary
from taskmem.store.tasks import load_task_with_plan
from taskmem.store.writer import Reader


@dataclasses.dataclass
class ThreadRecord:
    task: Task | None
    plan: Plan | None
    summary: RunningSummary | None
    items: list[StoredStateItem]
    recent: list[Message]  # newest `count`, oldest first


def thread_record(db: Reader, namespace: str, thread_id: str, task_id: str, recent: int) -> ThreadRecord:
    task, plan = load_task_with_plan(db, namespace, task_id, 0) if task_id else (None, None)
    return ThreadRecord(task, plan, running_summary(db, namespace, thread_id),
                        item_store.thread_items(db, namespace, thread_id, include_superseded=False),
                        message_store.recent_messages(db, namespace, thread_id, recent))


def messages_since(db: Reader, namespace: str, thread_id: str, summary: RunningSummary | None,
                   limit: int) -> list[Message]:
    """The newest `limit` messages after the running summary (of all, when there is none), oldest first."""
    sql = "SELECT * FROM messages WHERE namespace = ? AND thread_id = ?"
    params: list[object] = [namespace, thread_id]
    if summary is not None:
        sql += " AND (created_at > ? OR (created_at = ? AND id > ?))"
        params += [summary.last_message_created_at, summary.last_message_created_at, summary.last_message_id]
    rows = db.fetchall(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])
    return [message_from_row(row) for row in reversed(rows)]
