"""Webhooks to a task's callback_url: which events go, how a request is signed, when to retry.

Signing follows the Standard Webhooks scheme (what webhook receivers and the
`standardwebhooks` libraries verify): headers webhook-id, webhook-timestamp and
webhook-signature = "v1," + base64(HMAC-SHA256(key, f"{id}.{timestamp}.{body}")), where
the key is the base64 after "whsec_" in the namespace's secret. The id is the event's
cursor, so it is the idempotency key: the same on every retry of the same event.

A rotated secret keeps signing beside the new one for an overlap: the header then carries
both signatures, space-separated, new first ("v1,<new> v1,<old>"); a receiver's library
accepts the request when any one of them verifies with the secret it holds.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import hashlib
import hmac
import json
from collections.abc import Sequence
from typing import Any

import tenacity

from taskmem.core.errors import InvalidArgument
from taskmem.core.events import EventType

SECRET_PREFIX = "whsec_"

# How long a rotated secret still signs beside the new one: by default a day, for a receiver to be
# updated; at most a week, so a secret that was rotated because it leaked stops soon.
DEFAULT_SECRET_OVERLAP_US = 24 * 3600 * 1_000_000
MAX_SECRET_OVERLAP_US = 7 * 24 * 3600 * 1_000_000

# What a task's webhook carries when it names no types: lifecycle, plan, waits and errors —
# not actions, action log lines or messages, which an agent writes by the hundred.
DEFAULT_EVENT_TYPES: frozenset[EventType] = frozenset({
    EventType.TASK_CREATED, EventType.TASK_UPDATED, EventType.TASK_STATUS_CHANGED, EventType.TASK_STUCK,
    EventType.TASK_AUTO_PAUSED, EventType.TASK_AUTO_ARCHIVED,
    EventType.PLAN_REPLACED, EventType.PLAN_ITEM_UPDATED,
    EventType.PLAN_ITEM_CLAIMED, EventType.PLAN_ITEM_CLAIM_RELEASED, EventType.PLAN_ITEM_CLAIM_EXPIRED,
    EventType.WAIT_CREATED, EventType.WAIT_RESOLVED, EventType.WAIT_TIMED_OUT, EventType.WAIT_CANCELLED,
    EventType.WAIT_FAILED,
    EventType.TASK_STATE_ERROR_ADDED,
})

# Events that carry the task itself: the delivery loop learns callback_url changes from them.
TASK_EVENTS: frozenset[EventType] = frozenset({
    EventType.TASK_CREATED, EventType.TASK_UPDATED, EventType.TASK_STATUS_CHANGED,
})


class DeliveryState(enum.StrEnum):
    PENDING = "WEBHOOK_DELIVERY_STATE_PENDING"
    DELIVERED = "WEBHOOK_DELIVERY_STATE_DELIVERED"
    DEAD_LETTERED = "WEBHOOK_DELIVERY_STATE_DEAD_LETTERED"


@dataclasses.dataclass
class Delivery:
    """One event's delivery to a callback_url: its attempts and where it stands."""

    namespace: str
    task_id: str
    cursor: int
    event_type: str
    url: str
    state: str = DeliveryState.PENDING
    attempts: int = 0
    last_status_code: int = 0
    last_error: str = ""
    first_attempt_at: int = 0
    last_attempt_at: int = 0
    next_attempt_at: int | None = None


@dataclasses.dataclass(frozen=True)
class Hook:
    """Where a task's events go and which ones."""

    url: str
    types: frozenset[EventType]


def hook_of(callback_url: str, event_types: list[str]) -> Hook | None:
    """The task's hook; None when it has no callback_url."""
    if not callback_url:
        return None
    return Hook(callback_url, frozenset(EventType(t) for t in event_types) or DEFAULT_EVENT_TYPES)


def hook_from_task_payload(payload: dict[str, Any]) -> Hook | None:
    """The hook a TASK_* event's payload (the task in proto JSON form) describes."""
    return hook_of(payload.get("callback_url", ""), payload.get("webhook_event_types", []))


def request_body(task_id: str, cursor: int, event_json: dict[str, Any]) -> bytes:
    """{"task_id", "cursor", "event"}: the event in its proto JSON form."""
    return json.dumps({"task_id": task_id, "cursor": cursor, "event": event_json},
                      separators=(",", ":"), sort_keys=True).encode()


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """The webhook-signature header value for one request."""
    key = base64.b64decode(secret.removeprefix(SECRET_PREFIX))
    signed = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


@dataclasses.dataclass(frozen=True)
class SigningSecrets:
    """A namespace's secret and, after a rotation, the one it replaced with the end of its overlap (µs)."""

    current: str
    previous: str = ""
    previous_until: int = 0

    def signing(self, now: int) -> list[str]:
        """The secrets that sign a request made at now: the current one, and the previous one until its overlap ends."""
        if self.previous and now < self.previous_until:
            return [self.current, self.previous]
        return [self.current]


def secret_overlap_us(field: str, requested_us: int | None) -> int:
    """The overlap a rotation asked for (None: the default), refused past the maximum."""
    if requested_us is None:
        return DEFAULT_SECRET_OVERLAP_US
    if requested_us > MAX_SECRET_OVERLAP_US:
        raise InvalidArgument(field, "is longer than 7 days, the most a replaced secret keeps signing")
    return requested_us


def signed_headers(secrets: Sequence[str], cursor: int, timestamp: int, body: bytes) -> dict[str, str]:
    """The request's headers, with one signature per secret in webhook-signature."""
    message_id = str(cursor)
    return {
        "content-type": "application/json",
        "user-agent": "taskmem-webhook/1",
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(secret, message_id, timestamp, body) for secret in secrets),
    }


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """Exponential back-off between attempts (tenacity's wait_exponential: initial × 2^(n-1), capped),
    for retry_period after the first attempt; then the event is dead-lettered. The period is
    measured from the stored time of the first attempt, so it holds across restarts."""

    initial_seconds: float
    max_seconds: float
    retry_period_seconds: float

    def delay_after(self, attempts: int) -> float:
        """Seconds to wait after the attempts-th failed attempt."""
        state = tenacity.RetryCallState(retry_object=None, fn=None, args=(), kwargs={})  # type: ignore[arg-type]
        state.attempt_number = attempts
        wait = tenacity.wait_exponential(multiplier=self.initial_seconds, max=self.max_seconds)
        return float(wait(state))

    def next_attempt_at(self, first_attempt_at: int, attempts: int, now: int) -> int | None:
        """When to try again after a failure (µs), or None when the retry period is over: dead-letter it."""
        due = now + int(self.delay_after(attempts) * 1_000_000)
        if due > first_attempt_at + int(self.retry_period_seconds * 1_000_000):
            return None
        return due


def is_success(status_code: int) -> bool:
    return 200 <= status_code < 300
