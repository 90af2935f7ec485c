"""Maintenance decisions: stuck alerts, auto-pause, auto-archive and retention (pure; the loop does the I/O).

A task "without update" is measured from its update_time. Maintenance's own writes
(a stuck alert and its metadata key) keep update_time as it was, so an alert never
resets the clock that leads to auto-pause. A task with an open wait
(metadata active_wait_ids) is waiting on purpose and is neither alerted nor paused.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from taskmem.core.tasks import FINISHED, WORKING, Task
from taskmem.core.waits import format_duration
from taskmem.core.webhooks import DeliveryState

US = 1_000_000


class Chore(enum.Enum):
    STUCK_ALERT = "stuck_alert"
    AUTO_PAUSE = "auto_pause"
    AUTO_ARCHIVE = "auto_archive"
    ARCHIVE_EPISODE = "archive_episode"
    DELETE_EPISODE = "delete_episode"
    PRUNE_WEBHOOK_DELIVERY = "prune_webhook_delivery"
    DELETE_EXPIRED_MEMORY_ENTRY = "delete_expired_memory_entry"
    DELETE_EXPIRED_MESSAGE = "delete_expired_message"
    DELETE_EXPIRED_EPISODE = "delete_expired_episode"
    DELETE_EXPIRED_LOG_LINE = "delete_expired_log_line"
    DELETE_EXPIRED_EVENT = "delete_expired_event"
    STRIP_EXPIRED_EVENT = "strip_expired_event"
    DELETE_EXPIRED_CHECKPOINT = "delete_expired_checkpoint"
    DELETE_EXPIRED_STORE_ITEM = "delete_expired_store_item"


@dataclasses.dataclass(frozen=True)
class Policy:
    """Thresholds in microseconds; 0 turns a chore off."""

    stuck_after_us: int
    stuck_cooldown_us: int
    pause_after_us: int
    archive_after_us: int
    episode_retention_us: int = 0
    # Retention deletes old episodes only when told to; otherwise it archives them.
    delete_episodes: bool = False
    # Webhook delivery rows (bookkeeping: the events themselves stay in the log) are deleted this
    # long after their last attempt, so the table holds a window, not every event ever sent.
    webhook_delivered_retention_us: int = 0
    webhook_dead_letter_retention_us: int = 0

    @classmethod
    def from_seconds(cls, stuck_after: float, cooldown: float, pause_after: float, archive_after: float,
                     episode_retention: float = 0.0, delete_episodes: bool = False,
                     webhook_delivered_retention: float = 0.0, webhook_dead_letter_retention: float = 0.0) -> Policy:
        return cls(int(stuck_after * US), int(cooldown * US), int(pause_after * US), int(archive_after * US),
                   int(episode_retention * US), delete_episodes, int(webhook_delivered_retention * US),
                   int(webhook_dead_letter_retention * US))

    @property
    def episode_chore(self) -> Chore:
        return Chore.DELETE_EPISODE if self.delete_episodes else Chore.ARCHIVE_EPISODE

    def episode_cutoff(self, now: int) -> int | None:
        """Episodes created at or before this time are past retention (None: retention is off)."""
        return now - self.episode_retention_us if self.episode_retention_us else None

    def webhook_delivery_cutoffs(self, now: int) -> dict[str, int]:
        """Per finished delivery state: rows last attempted before this time are past retention."""
        return {state: now - keep for state, keep in ((DeliveryState.DELIVERED, self.webhook_delivered_retention_us),
                                                       (DeliveryState.DEAD_LETTERED,
                                                        self.webhook_dead_letter_retention_us)) if keep}


def _has_open_wait(task: Task) -> bool:
    return bool(task.metadata.get("active_wait_ids"))


def _last_alert_us(metadata: dict[str, Any]) -> int | None:
    value = metadata.get("last_stuck_alert_at")
    return int(value * US) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def chore_for(task: Task, now: int, policy: Policy) -> Chore | None:
    """What maintenance should do to the task now, if anything (archive, then pause, then alert)."""
    if task.status in FINISHED:
        if policy.archive_after_us and task.completed_at is not None \
                and now - task.completed_at >= policy.archive_after_us:
            return Chore.AUTO_ARCHIVE
        return None
    if task.status not in WORKING or _has_open_wait(task):
        return None
    idle = now - task.updated_at
    if policy.pause_after_us and idle >= policy.pause_after_us:
        return Chore.AUTO_PAUSE
    if policy.stuck_after_us and idle >= policy.stuck_after_us:
        last = _last_alert_us(task.metadata)
        if last is None or now - last >= policy.stuck_cooldown_us:
            return Chore.STUCK_ALERT
    return None


def stuck_message(task: Task, now: int) -> str:
    return (f"[Stuck] no update for {format_duration(now - task.updated_at)} while {task.status.name}; "
            "post progress, or pause or finish the task")


def auto_pause_message(task: Task, now: int) -> str:
    return (f"[Auto-paused] no update for {format_duration(now - task.updated_at)} while {task.status.name}; "
            f"resume it by setting a working status")


def auto_archive_message(task: Task, now: int) -> str:
    assert task.completed_at is not None
    return f"[Auto-archived] {task.status.name} {format_duration(now - task.completed_at)} ago; still readable"


def with_alert_time(metadata: dict[str, Any], now: int) -> dict[str, Any]:
    return {**metadata, "last_stuck_alert_at": now / US}
