"""Wait decisions without I/O: outcomes of observations, paths, hosts, messages and metadata keys."""

from __future__ import annotations

import posixpath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskmem.core.errors import FailedPrecondition, InvalidArgument
from taskmem.core.events import Event, EventType
from taskmem.core.tasks import TaskStatus
from taskmem.core.waits import (
    EventTarget, ExternalTarget, FileTarget, HttpTarget, TaskStatusTarget, TimerTarget, Wait, WaitStatus,
    describe_target, end_wait, event_matches, format_duration, http_matches, is_inside,
    metadata_after, outcome_message, resolve_in_workspace, target_from_json, target_to_json, task_status_outcome,
)

S = 1_000_000


def a_wait(target: object, **fields: object) -> Wait:
    values: dict[str, object] = dict(namespace="default", id="wai_1", criteria="ci green", target=target,
                                     created_at=100 * S, correlation_id="cor_1", task_id="tsk_1")
    values.update(fields)
    return Wait(**values)  # type: ignore[arg-type]


def test_a_task_status_target_resolves_in_a_wanted_status_and_fails_when_none_is_reachable() -> None:
    target = TaskStatusTarget("tsk_b", [TaskStatus.COMPLETED])
    assert task_status_outcome(target, TaskStatus.EXECUTING) is None
    assert task_status_outcome(target, TaskStatus.PAUSED) is None  # may still resume and complete
    assert task_status_outcome(target, TaskStatus.COMPLETED) == (WaitStatus.RESOLVED, "task tsk_b reached COMPLETED")
    status, result = task_status_outcome(target, TaskStatus.FAILED) or (None, "")
    assert status is WaitStatus.FAILED and "can no longer reach COMPLETED" in result
    assert task_status_outcome(TaskStatusTarget("t", [TaskStatus.ARCHIVED]), TaskStatus.FAILED) is None


def _event(cursor: int, event_type: EventType, payload: dict[str, object], *, created_at: int = 200 * S,
           correlation_id: str = "cor_other", task_id: str = "tsk_1") -> Event:
    return Event("default", event_type, task_id, correlation_id, payload, created_at, cursor)


def test_an_event_target_matches_type_task_and_payload_field_after_its_start() -> None:
    target = EventTarget("tsk_1", EventType.TASK_STATUS_CHANGED, "to", "TASK_STATUS_COMPLETED")
    wait = a_wait(target, start_cursor=10)
    assert event_matches(wait, _event(11, EventType.TASK_STATUS_CHANGED, {"to": "TASK_STATUS_COMPLETED"}))
    assert not event_matches(wait, _event(10, EventType.TASK_STATUS_CHANGED, {"to": "TASK_STATUS_COMPLETED"}))
    assert not event_matches(wait, _event(11, EventType.TASK_STATUS_CHANGED, {"to": "TASK_STATUS_FAILED"}))
    assert not event_matches(wait, _event(11, EventType.TASK_UPDATED, {"to": "TASK_STATUS_COMPLETED"}))
    assert not event_matches(wait, _event(11, EventType.TASK_STATUS_CHANGED, {"to": "TASK_STATUS_COMPLETED"},
                                          task_id="tsk_2"))
    nested = a_wait(EventTarget("tsk_1", EventType.ACTION_COMPLETED, "output.count", 3))
    assert event_matches(nested, _event(1, EventType.ACTION_COMPLETED, {"output": {"count": 3.0}}))
    assert not event_matches(nested, _event(1, EventType.ACTION_COMPLETED, {"output": {}}))


def test_the_events_of_a_waits_own_creation_do_not_match_it() -> None:
    wait = a_wait(EventTarget("tsk_1", EventType.MESSAGE_POSTED))
    own = _event(5, EventType.MESSAGE_POSTED, {}, created_at=wait.created_at, correlation_id=wait.correlation_id)
    assert not event_matches(wait, own)
    assert event_matches(wait, _event(6, EventType.MESSAGE_POSTED, {}, correlation_id=wait.correlation_id))


def test_http_matches_status_and_body_text() -> None:
    target = HttpTarget("http://127.0.0.1/ci", 200, "green")
    assert http_matches(target, 200, b"all green")
    assert not http_matches(target, 200, b"red")
    assert not http_matches(target, 503, b"green")



def test_file_paths_resolve_under_the_workspace_or_are_refused_naming_the_field() -> None:
    assert resolve_in_workspace("f", "/srv/app/", "out/./a.txt") == "/srv/app/out/a.txt"
    assert resolve_in_workspace("f", "/srv/app", "/srv/app/b") == "/srv/app/b"
    for outside in ("../x", "/etc/passwd", "a/../../x", "/srv/application/x"):
        with pytest.raises(InvalidArgument) as raised:
            resolve_in_workspace("target.file.path", "/srv/app", outside)
        assert raised.value.field == "target.file.path"
    with pytest.raises(InvalidArgument):
        resolve_in_workspace("target.file.path", "", "a")


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "/", "c/..", "//"]), max_size=8))
def test_a_resolved_path_never_leaves_the_workspace(parts: list[str]) -> None:
    try:
        resolved = resolve_in_workspace("f", "/ws", "/".join(parts))
    except InvalidArgument:
        return
    assert is_inside("/ws", resolved) and resolved == posixpath.normpath(resolved)


def test_ending_a_wait_is_final_and_the_message_and_metadata_say_so() -> None:
    wait = a_wait(TimerTarget(5 * S), timeout_us=60 * S)
    opened = metadata_after({"display": ":100", "active_wait_ids": ["wai_0"]}, wait, 100 * S)
    assert opened == {"display": ":100", "active_wait_ids": ["wai_0", "wai_1"], "last_wait_state": "watching",
                      "last_wait_event_at": 100.0}
    end_wait(wait, WaitStatus.RESOLVED, "5s elapsed", 105 * S)
    assert outcome_message(wait) == "[Wait resolved] ci green → 5s elapsed"
    closed = metadata_after(opened, wait, 105 * S)
    assert closed["active_wait_ids"] == ["wai_0"] and closed["last_wait_state"] == "resolved"
    with pytest.raises(FailedPrecondition):
        end_wait(wait, WaitStatus.CANCELLED, "late", 106 * S)
    timed_out = a_wait(TimerTarget(S), status=WaitStatus.TIMED_OUT, result="no outcome within 1s")
    assert outcome_message(timed_out) == "[Wait timed out] ci green → no outcome within 1s"


def test_expiry_is_the_earlier_of_timer_and_deadline() -> None:
    assert a_wait(TimerTarget(5 * S), timeout_us=2 * S).expires_at == 102 * S
    assert a_wait(TimerTarget(5 * S)).expires_at == 105 * S
    assert a_wait(ExternalTarget()).expires_at is None


@pytest.mark.parametrize("target", [
    TimerTarget(90 * S), TaskStatusTarget("t", [TaskStatus.COMPLETED, TaskStatus.FAILED]),
    EventTarget("t", EventType.MESSAGE_POSTED, "role", "MESSAGE_ROLE_USER"), HttpTarget("http://h/x", 204, "ok"),
    FileTarget("a.txt", "x", "/w/a.txt", "/w"), ExternalTarget("alex"),
])
def test_targets_survive_their_stored_form_and_describe_themselves(target: object) -> None:
    kind = a_wait(target).kind
    assert target_from_json(kind, target_to_json(target)) == target  # type: ignore[arg-type]
    assert describe_target(target)  # type: ignore[arg-type]


def test_durations_read_like_a_person_wrote_them() -> None:
    assert [format_duration(us) for us in (500_000, 5 * S, 90 * S, 3 * 3600 * S + 600 * S, 2 * 86400 * S)] == [
        "0.5s", "5s", "1m 30s", "3h 10m", "2d"]
