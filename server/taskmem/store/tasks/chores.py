"""Maintenance writes: stuck alerts, auto-pause, auto-archive and episode retention, each with its event.

Nothing is deleted unless configuration says so: archived tasks and archived
episodes keep every row and stay readable.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.maintenance_chores import (
    Chore, Policy, auto_archive_message, auto_pause_message, chore_for, stuck_message, with_alert_time,
)
from taskmem.core.messages import Kind, Message, Role
from taskmem.core.tasks import FINISHED, WORKING, Task, TaskStatus
from taskmem.store.tasks import tasks as task_store
from taskmem.store.memory.episodes import episode_from_row
from taskmem.store.tasks.messages import post_message
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Transaction

PAGE = 500


def _duration_json(us: int) -> str:
    return f"{us // 1_000_000}.{us % 1_000_000:06d}s"


def candidates(db: Reader, now: int, policy: Policy, after_key: list[Any] | None) -> list[Task]:
    """One page (by status, time, namespace, id) of tasks that may need a chore; chore_for decides."""
    idle_us = min((t for t in (policy.stuck_after_us, policy.pause_after_us) if t), default=0)
    parts, params = [], []
    if idle_us:
        parts.append(f"(status IN ({','.join('?' * len(WORKING))}) AND updated_at <= ?)")
        params.extend([*(s.value for s in sorted(WORKING)), now - idle_us])
    if policy.archive_after_us:
        parts.append(f"(status IN ({','.join('?' * len(FINISHED))}) AND completed_at <= ?)")
        params.extend([*(s.value for s in sorted(FINISHED)), now - policy.archive_after_us])
    if not parts:
        return []
    rows = (PageQuery("tasks", order=("namespace", "id")).where(f"({' OR '.join(parts)})", *params)
            .after(after_key).fetch(db, PAGE))
    return [task_store.task_from_row(row) for row in rows]


def _system_message(tx: Transaction, task: Task, kind: Kind, content: str) -> Message:
    return post_message(tx, Message(tx.namespace, new_id("msg"), task.id, Role.SYSTEM, kind, content, tx.now,
                                    task.id))


def alert_stuck(tx: Transaction, task_id: str, policy: Policy) -> bool:
    """Post a stuck alert and stamp last_stuck_alert_at, keeping the task's update time (the idle clock)."""
    task = task_store.load_task(tx, tx.namespace, task_id)
    if chore_for(task, tx.now, policy) is not Chore.STUCK_ALERT:
        return False
    idle = tx.now - task.updated_at
    message = _system_message(tx, task, Kind.STUCK, stuck_message(task, tx.now))
    tx.execute("UPDATE tasks SET metadata = ?, updated_at = ? WHERE namespace = ? AND id = ?",
               (json.dumps(with_alert_time(task.metadata, tx.now), separators=(",", ":"), allow_nan=False), task.updated_at, tx.namespace, task.id))
    tx.emit(EventType.TASK_STUCK, task.id, task_store.load_task(tx, tx.namespace, task.id),
            {"idle": _duration_json(idle), "message_id": message.id})
    return True


def auto_pause(tx: Transaction, task_id: str, policy: Policy) -> bool:
    task = task_store.load_task(tx, tx.namespace, task_id)
    if chore_for(task, tx.now, policy) is not Chore.AUTO_PAUSE:
        return False
    idle = tx.now - task.updated_at
    _system_message(tx, task, Kind.LIFECYCLE, auto_pause_message(task, tx.now))
    paused = task_store.update_task(tx, task.id, {"status": TaskStatus.PAUSED}, "")
    tx.emit(EventType.TASK_AUTO_PAUSED, task.id, paused, {"idle": _duration_json(idle)})
    return True


def auto_archive(tx: Transaction, task_id: str, policy: Policy) -> bool:
    task = task_store.load_task(tx, tx.namespace, task_id)
    if chore_for(task, tx.now, policy) is not Chore.AUTO_ARCHIVE or task.completed_at is None:
        return False
    finished_for = tx.now - task.completed_at
    _system_message(tx, task, Kind.LIFECYCLE, auto_archive_message(task, tx.now))
    archived = task_store.update_task(tx, task.id, {"status": TaskStatus.ARCHIVED}, "")
    tx.emit(EventType.TASK_AUTO_ARCHIVED, task.id, archived, {"finished_for": _duration_json(finished_for)})
    return True


MUTATIONS = {Chore.STUCK_ALERT: alert_stuck, Chore.AUTO_PAUSE: auto_pause, Chore.AUTO_ARCHIVE: auto_archive}


def namespaces_with_old_episodes(db: Reader, policy: Policy, now: int) -> list[str]:
    """The namespaces holding episodes that retention should archive (or delete) now."""
    cutoff = policy.episode_cutoff(now)
    if cutoff is None:
        return []
    pending = "" if policy.delete_episodes else " AND archived_at IS NULL"
    rows = db.fetchall(f"SELECT DISTINCT namespace FROM episodes WHERE created_at <= ?{pending}", (cutoff,))
    return [row["namespace"] for row in rows]


def retire_old_episodes(tx: Transaction, policy: Policy) -> int:
    """Archive (or delete) up to PAGE episodes of the namespace past retention, one event each; returns how many."""
    cutoff = policy.episode_cutoff(tx.now)
    if cutoff is None:
        return 0
    pending = "" if policy.delete_episodes else " AND archived_at IS NULL"
    rows = tx.fetchall(f"SELECT * FROM episodes WHERE namespace = ? AND created_at <= ?{pending}"
                       " ORDER BY created_at, seq LIMIT ?", (tx.namespace, cutoff, PAGE))
    for row in rows:
        episode = episode_from_row(row)
        if policy.delete_episodes:
            tx.execute("DELETE FROM episodes WHERE seq = ?", (row["seq"],))
            tx.emit(EventType.EPISODE_DELETED, episode.task_id, episode).expires_at = episode.expires_at
        else:
            tx.execute("UPDATE episodes SET archived_at = ? WHERE seq = ?", (tx.now, row["seq"]))
            tx.emit(EventType.EPISODE_ARCHIVED, episode.task_id,
                    dataclasses.replace(episode, archived_at=tx.now)).expires_at = episode.expires_at
    return len(rows)

