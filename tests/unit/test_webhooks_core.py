"""Webhook signing and retry timing, without a server."""

from __future__ import annotations

import base64
import datetime

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from taskmem.core.events import EventType
from taskmem.core.errors import InvalidArgument
from taskmem.core.webhooks import (
    DEFAULT_EVENT_TYPES, DEFAULT_SECRET_OVERLAP_US, MAX_SECRET_OVERLAP_US, RetryPolicy, SigningSecrets, hook_of,
    secret_overlap_us, signature, signed_headers,
)

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
OLD_SECRET = "whsec_" + base64.b64encode(bytes(range(32, 64))).decode()
OTHER_SECRET = "whsec_" + base64.b64encode(bytes(range(64, 96))).decode()


def test_the_signature_is_the_one_the_standard_webhooks_library_makes_and_verifies() -> None:
    body = b'{"cursor":7,"event":{},"task_id":"tsk_1"}'
    reference = Webhook(SECRET).sign("7", datetime.datetime.fromtimestamp(1_795_000_000, datetime.UTC), body.decode())
    assert signature(SECRET, "7", 1_795_000_000, body) == reference
    now = int(datetime.datetime.now(datetime.UTC).timestamp())
    assert Webhook(SECRET).verify(body, signed_headers([SECRET], 7, now, body)) == {
        "cursor": 7, "event": {}, "task_id": "tsk_1"}


def test_back_off_doubles_from_the_initial_delay_up_to_the_cap() -> None:
    policy = RetryPolicy(initial_seconds=1.0, max_seconds=10.0, retry_period_seconds=3600.0)
    assert [policy.delay_after(n) for n in range(1, 7)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]


def test_an_event_is_dead_lettered_once_the_next_attempt_would_fall_after_the_retry_period() -> None:
    policy = RetryPolicy(initial_seconds=1.0, max_seconds=10.0, retry_period_seconds=30.0)
    first = 1_000_000_000
    assert policy.next_attempt_at(first, 1, first) == first + 1_000_000
    assert policy.next_attempt_at(first, 5, first + 20_000_000) == first + 30_000_000  # exactly at the end: still tried
    assert policy.next_attempt_at(first, 5, first + 21_000_000) is None


def test_a_task_without_types_gets_the_default_set_and_one_without_a_url_no_hook() -> None:
    assert hook_of("", ["EVENT_TYPE_ACTION_RECORDED"]) is None
    default = hook_of("http://127.0.0.1/hook", [])
    assert default is not None and default.types == DEFAULT_EVENT_TYPES
    assert EventType.ACTION_LOG_APPENDED not in DEFAULT_EVENT_TYPES and EventType.MESSAGE_POSTED not in DEFAULT_EVENT_TYPES
    chosen = hook_of("http://127.0.0.1/hook", ["EVENT_TYPE_ACTION_RECORDED"])
    assert chosen is not None and chosen.types == {EventType.ACTION_RECORDED}


def test_a_receiver_refuses_a_request_signed_more_than_five_minutes_ago_as_the_readme_says() -> None:
    """The documented tolerance is the reference library's: an attempt signed 299 s ago verifies, 301 s not
    (every attempt is signed with its own time, so retries are never this old)."""
    body = b'{"cursor":7,"event":{},"task_id":"tsk_1"}'
    now = int(datetime.datetime.now(datetime.UTC).timestamp())
    Webhook(SECRET).verify(body, signed_headers([SECRET], 7, now - 299, body))
    with pytest.raises(WebhookVerificationError, match="too old"):
        Webhook(SECRET).verify(body, signed_headers([SECRET], 7, now - 301, body))


def test_a_request_signed_with_two_secrets_verifies_with_either_and_not_with_a_third() -> None:
    body = b'{"cursor":7,"event":{},"task_id":"tsk_1"}'
    now = int(datetime.datetime.now(datetime.UTC).timestamp())
    headers = signed_headers([SECRET, OLD_SECRET], 7, now, body)
    assert headers["webhook-signature"] == f"{signature(SECRET, '7', now, body)} {signature(OLD_SECRET, '7', now, body)}"
    Webhook(SECRET).verify(body, headers)
    Webhook(OLD_SECRET).verify(body, headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(OTHER_SECRET).verify(body, headers)


def test_the_replaced_secret_signs_beside_the_new_one_until_its_overlap_ends() -> None:
    rotated = SigningSecrets(SECRET, OLD_SECRET, previous_until=1_000_000)
    assert rotated.signing(999_999) == [SECRET, OLD_SECRET]
    assert rotated.signing(1_000_000) == [SECRET]
    assert SigningSecrets(SECRET).signing(0) == [SECRET]


def test_a_rotation_overlaps_a_day_by_default_and_at_most_seven_days() -> None:
    assert secret_overlap_us("overlap", None) == DEFAULT_SECRET_OVERLAP_US == 86_400_000_000
    assert secret_overlap_us("overlap", 0) == 0
    assert secret_overlap_us("overlap", MAX_SECRET_OVERLAP_US) == 7 * 86_400_000_000
    with pytest.raises(InvalidArgument) as raised:
        secret_overlap_us("overlap", MAX_SECRET_OVERLAP_US + 1)
    assert raised.value.field == "overlap"
