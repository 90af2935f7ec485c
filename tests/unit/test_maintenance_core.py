"""Maintenance decisions without I/O: which chore a task needs now."""

from __future__ import annotations

from taskmem.core.maintenance_chores import US, Chore, Policy, chore_for
from taskmem.core.tasks import Task, TaskStatus
from taskmem.core.webhooks import DeliveryState

S = 1_000_000
POLICY = Policy.from_seconds(stuck_after=60, cooldown=300, pause_after=3600, archive_after=7 * 86400)
NOW = 10_000_000 * S


def a_task(status: TaskStatus, idle_s: float, **fields: object) -> Task:
    return Task(namespace="default", id="tsk_1", name="t", status=status, created_at=0,
                updated_at=NOW - int(idle_s * S), **fields)  # type: ignore[arg-type]


def test_a_working_task_is_alerted_then_paused_as_it_stays_idle() -> None:
    assert chore_for(a_task(TaskStatus.EXECUTING, 30), NOW, POLICY) is None
    assert chore_for(a_task(TaskStatus.EXECUTING, 61), NOW, POLICY) is Chore.STUCK_ALERT
    assert chore_for(a_task(TaskStatus.PENDING, 3601), NOW, POLICY) is Chore.AUTO_PAUSE


def test_the_stuck_alert_cooldown_is_read_from_metadata() -> None:
    recent = a_task(TaskStatus.EXECUTING, 600, metadata={"last_stuck_alert_at": (NOW - 100 * S) / S})
    assert chore_for(recent, NOW, POLICY) is None
    old = a_task(TaskStatus.EXECUTING, 600, metadata={"last_stuck_alert_at": (NOW - 301 * S) / S})
    assert chore_for(old, NOW, POLICY) is Chore.STUCK_ALERT


def test_a_task_with_an_open_wait_or_not_working_is_left_alone() -> None:
    waiting = a_task(TaskStatus.EXECUTING, 99_999, metadata={"active_wait_ids": ["wai_1"]})
    assert chore_for(waiting, NOW, POLICY) is None
    assert chore_for(a_task(TaskStatus.PAUSED, 99_999_999), NOW, POLICY) is None
    assert chore_for(a_task(TaskStatus.ARCHIVED, 99_999_999), NOW, POLICY) is None


def test_finished_tasks_are_archived_after_the_threshold_by_their_complete_time() -> None:
    done = a_task(TaskStatus.COMPLETED, 8 * 86400, completed_at=NOW - 8 * 86400 * S)
    assert chore_for(done, NOW, POLICY) is Chore.AUTO_ARCHIVE
    fresh = a_task(TaskStatus.FAILED, 8 * 86400, completed_at=NOW - 86400 * S)
    assert chore_for(fresh, NOW, POLICY) is None


def test_a_threshold_of_zero_turns_its_chore_off() -> None:
    off = Policy(0, 0, 0, 0)
    assert chore_for(a_task(TaskStatus.EXECUTING, 10**7), NOW, off) is None
    assert chore_for(a_task(TaskStatus.COMPLETED, 10**7, completed_at=0), NOW, off) is None


def test_finished_webhook_deliveries_have_a_cutoff_per_state_and_pending_ones_none() -> None:
    policy = Policy.from_seconds(0, 0, 0, 0, webhook_delivered_retention=10, webhook_dead_letter_retention=100)
    now = 1_000 * US
    assert policy.webhook_delivery_cutoffs(now) == {DeliveryState.DELIVERED: now - 10 * US,
                                                    DeliveryState.DEAD_LETTERED: now - 100 * US}
    assert Policy.from_seconds(0, 0, 0, 0, webhook_delivered_retention=10).webhook_delivery_cutoffs(now) == {
        DeliveryState.DELIVERED: now - 10 * US}
