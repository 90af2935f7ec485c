"""The nesting limit of Struct and Value fields (api/validate.py): how levels are counted, and that the path
named in the error is the object or list past the limit."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import struct_pb2

from taskmem.api import validate
from taskmem.api.validate import STRUCT_MAX_DEPTH
from taskmem.core.errors import LimitExceeded
from tests.support.nesting import lists, objects


def as_struct(data: dict[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(data)
    return message


def as_value(data: Any) -> struct_pb2.Value:
    message = struct_pb2.Value()
    if isinstance(data, dict):
        message.struct_value.update(data)
    elif isinstance(data, list):
        message.list_value.extend(data)
    else:
        message.string_value = data
    return message


def test_a_struct_at_the_limit_is_accepted_whole() -> None:
    data = objects(STRUCT_MAX_DEPTH)
    assert validate.struct("metadata", as_struct(data)) == data


def test_a_struct_one_level_past_the_limit_names_the_object_past_it() -> None:
    with pytest.raises(LimitExceeded) as raised:
        validate.struct("metadata", as_struct(objects(STRUCT_MAX_DEPTH + 1)))
    assert raised.value.field == "metadata" + ".k" * STRUCT_MAX_DEPTH
    assert f"at most {STRUCT_MAX_DEPTH} levels of objects and lists" in raised.value.message


def test_lists_count_as_levels_like_objects() -> None:
    at_limit = {"k": lists(STRUCT_MAX_DEPTH - 1)}
    assert validate.struct("input", as_struct(at_limit)) == at_limit
    with pytest.raises(LimitExceeded) as raised:
        validate.struct("input", as_struct({"k": lists(STRUCT_MAX_DEPTH)}))
    assert raised.value.field == "input.k" + "[0]" * (STRUCT_MAX_DEPTH - 1)


def test_scalars_at_the_deepest_level_add_no_level() -> None:
    data = objects(STRUCT_MAX_DEPTH - 1, {"number": 1.5, "text": "x", "flag": True, "nothing": None})
    assert validate.struct("context", as_struct(data)) == data


def test_a_deep_branch_is_found_beside_shallow_ones() -> None:
    data = {"shallow": 1, "list": [1, 2, {"a": objects(STRUCT_MAX_DEPTH)}]}
    with pytest.raises(LimitExceeded) as raised:
        validate.struct("output", as_struct(data))
    assert raised.value.field.startswith("output.list[2].a.k")


def test_a_value_counts_its_own_object_or_list_as_the_first_level() -> None:
    assert validate.value("payload_value", as_value(objects(STRUCT_MAX_DEPTH))) == objects(STRUCT_MAX_DEPTH)
    assert validate.value("payload_value", as_value(lists(STRUCT_MAX_DEPTH))) == lists(STRUCT_MAX_DEPTH)
    assert validate.value("payload_value", as_value("text")) == "text"
    for too_deep in (objects(STRUCT_MAX_DEPTH + 1), lists(STRUCT_MAX_DEPTH + 1)):
        with pytest.raises(LimitExceeded) as raised:
            validate.value("payload_value", as_value(too_deep))
        assert raised.value.field.startswith("payload_value")
