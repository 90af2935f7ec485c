"""How reads cut a stored JSON value nested deeper than replies carry (task_convert.within_depth): levels
count as writes count them, the object or list past the cut becomes a marker string, and a value within
the limit is passed on untouched."""

from __future__ import annotations


from google.protobuf import json_format

from taskmem.api import task_convert, wait_convert
from taskmem.api.task_convert import EVENT_PAYLOAD_MAX_DEPTH, READ_MAX_DEPTH, within_depth
from taskmem.core.events import Event, EventType
from taskmem.core.waits import EventTarget, Wait, WaitStatus
from tests.support.nesting import lists, objects


def marker(levels: int) -> str:
    return f"…(nested deeper than {levels} levels: cut on read)"


def test_a_value_within_the_limit_is_returned_as_it_is() -> None:
    value = {"a": objects(READ_MAX_DEPTH - 1), "b": [1, {"c": None}], "d": "text"}
    assert within_depth(value, READ_MAX_DEPTH) is value


def test_scalars_and_empty_containers_pass_at_any_limit() -> None:
    for value in ("text", 1.5, True, None):
        assert within_depth(value, 0) is value
    assert within_depth({}, 1) == {} and within_depth([], 1) == []


def test_the_object_one_level_past_the_limit_becomes_the_marker() -> None:
    assert within_depth(objects(READ_MAX_DEPTH + 1), READ_MAX_DEPTH) == objects(READ_MAX_DEPTH, marker(READ_MAX_DEPTH))
    assert within_depth(objects(40), 3) == objects(3, marker(3))


def test_lists_count_as_levels_and_are_cut_like_objects() -> None:
    assert within_depth(lists(5), 3) == lists(3, marker(3))
    assert within_depth({"a": [[{"b": 1}]]}, 3) == {"a": [[marker(3)]]}


def test_only_the_branch_too_deep_is_cut_and_its_siblings_stay_whole() -> None:
    value = {"shallow": {"x": [1, 2]}, "deep": objects(10), "n": 3}
    assert within_depth(value, 4) == {"shallow": {"x": [1, 2]}, "deep": objects(3, marker(4)), "n": 3}
    assert value["deep"] == objects(10)  # the stored value is not changed


def test_a_struct_reply_is_cut_at_the_write_limit() -> None:
    message = task_convert.struct({"deep": objects(50)})
    assert message is not None
    assert json_format.MessageToDict(message) == {"deep": objects(READ_MAX_DEPTH - 1, marker(READ_MAX_DEPTH))}


def test_an_event_and_its_webhook_json_cut_the_payload_at_the_payload_limit() -> None:
    payload = {"id": "t", "metadata": {"deep": objects(50)}}
    event = Event("default", EventType.TASK_UPDATED, "t", "corr", payload, 1_700_000_000_000_000, 7)
    cut = {"id": "t", "metadata": {"deep": objects(EVENT_PAYLOAD_MAX_DEPTH - 2, marker(EVENT_PAYLOAD_MAX_DEPTH))}}
    assert json_format.MessageToDict(task_convert.event(event).payload) == cut
    assert task_convert.event_json(event)["payload"] == cut
    # The event itself keeps what the store read.
    assert event.payload["metadata"]["deep"] == objects(50)


def test_a_wait_payload_value_is_cut_like_a_struct_field() -> None:
    wait = Wait(namespace="default", id="w", task_id="t", criteria="c", target=EventTarget(
        task_id="t", type=EventType.TASK_UPDATED, payload_field="metadata.x", payload_value=objects(50)),
        created_at=0, correlation_id="corr", status=WaitStatus.WAITING)
    got = json_format.MessageToDict(wait_convert.wait(wait).target.event.payload_value)
    assert got == objects(READ_MAX_DEPTH, marker(READ_MAX_DEPTH))
