"""Request checks that name the field at fault, and proto → domain conversion of inputs."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence, Sized
from enum import StrEnum
from typing import Any, TypeVar

from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from google.protobuf.internal.enum_type_wrapper import EnumTypeWrapper

from taskmem.core.errors import InvalidArgument, LimitExceeded
from taskmem.core.valid_time import AsOf

E = TypeVar("E", bound=StrEnum)

ID_MAX = 64
ENUM_FILTER_MAX = 100  # entries of a repeated enum filter, duplicates included
STRUCT_MAX_BYTES = 256 * 1024
# Levels of objects and lists in one Struct or Value field, the field's own object (or an object or list
# Value) counting 1. Every read re-encodes a stored value inside a reply, and an event inside its payload
# (a plan item's input sits at payload.items[i].input, the deepest). Protobuf decoders stop at 100 message
# levels (Python's upb, which the server encodes replies with, and C++; protobuf-es also 100 but without
# counting map entries; Go 10,000), and one JSON object costs Python three (Struct, map entry, Value):
# measured, a plan item's input of 31 levels already failed ListEvents. 20 leaves ten levels to spare.
STRUCT_MAX_DEPTH = 20
MAX_COUNT = 2**53  # token counts and the like: beyond this nothing is real
MAX_DURATION_US = 366 * 24 * 3600 * 1_000_000
_ID = re.compile(r"^[A-Za-z0-9._-]+$")


def text(field: str, value: str, limit: int, *, required: bool = False) -> str:
    if required and not value.strip():
        raise InvalidArgument(field, "is required")
    if len(value) > limit:
        raise LimitExceeded(field, f"is {len(value)} characters; at most {limit}")
    return value


def identifier(field: str, value: str, *, required: bool = True) -> str:
    """An id: letters, digits, '.', '_' and '-', at most 64 characters."""
    if not value:
        if required:
            raise InvalidArgument(field, "is required")
        return value
    if len(value) > ID_MAX:
        raise LimitExceeded(field, f"is {len(value)} characters; at most {ID_MAX}")
    if not _ID.match(value):
        raise InvalidArgument(field, "may hold only letters, digits, '.', '_' and '-'")
    return value


def thread(task_id: str, thread_id: str) -> str:
    """The thread a request names: a task's thread (its id) or a standalone thread id, not both."""
    identifier("task_id", task_id, required=False)
    identifier("thread_id", thread_id, required=False)
    if not task_id and not thread_id:
        raise InvalidArgument("task_id", "either task_id or thread_id is required")
    if task_id and thread_id and task_id != thread_id:
        raise InvalidArgument("thread_id", "a task's thread id is its task id; send one of the two")
    return task_id or thread_id


def count(field: str, items: Sized, limit: int, *, required: bool = False) -> None:
    n = len(items)
    if required and n == 0:
        raise InvalidArgument(field, "needs at least one entry")
    if n > limit:
        raise LimitExceeded(field, f"has {n} entries; at most {limit}")


def enum(field: str, value: int, wrapper: EnumTypeWrapper, domain: type[E], default: E | None = None) -> E | None:
    """The domain enum for a wire value; UNSPECIFIED gives default; unknown numbers are rejected."""
    if value == 0:
        return default
    try:
        return domain(wrapper.Name(value))
    except ValueError:
        raise InvalidArgument(field, f"unknown value {value}") from None


def enum_filter(field: str, values: Sequence[int], wrapper: EnumTypeWrapper, domain: type[E]) -> list[E]:
    """A repeated enum filter: at most ENUM_FILTER_MAX entries (counted before any is read), each value
    once in first-seen order, UNSPECIFIED ignored, unknown numbers rejected."""
    count(field, values, ENUM_FILTER_MAX)
    found = [enum(field, value, wrapper, domain) for value in dict.fromkeys(values)]
    return [value for value in found if value is not None]


def struct(field: str, message: struct_pb2.Struct, present: bool = True) -> dict[str, Any]:
    """A Struct as a dict: at most 256 KiB encoded, at most STRUCT_MAX_DEPTH levels of objects and lists
    (the Struct itself is the first), numbers finite (JSON has no NaN or Infinity)."""
    if not present:
        return {}
    size = message.ByteSize()
    if size > STRUCT_MAX_BYTES:
        raise LimitExceeded(field, f"is {size} bytes encoded; at most {STRUCT_MAX_BYTES}")
    return {key: _value(f"{field}.{key}", value, 1) for key, value in message.fields.items()}


def value(field: str, message: struct_pb2.Value) -> Any:
    """A Value as JSON data, like a Struct: at most 256 KiB encoded, at most STRUCT_MAX_DEPTH levels of
    objects and lists (an object or list Value is the first), numbers finite."""
    size = message.ByteSize()
    if size > STRUCT_MAX_BYTES:
        raise LimitExceeded(field, f"is {size} bytes encoded; at most {STRUCT_MAX_BYTES}")
    return _value(field, message, 0)


def _value(field: str, value: struct_pb2.Value, depth: int) -> Any:
    """value, which sits inside `depth` objects and lists of the field."""
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        if not math.isfinite(value.number_value):
            raise InvalidArgument(field, "is NaN or Infinity, which JSON cannot hold")
        return value.number_value
    if kind in ("struct_value", "list_value") and depth >= STRUCT_MAX_DEPTH:
        raise LimitExceeded(field, f"is nesting level {depth + 1}; at most {STRUCT_MAX_DEPTH} levels of objects and lists")
    if kind == "struct_value":
        return {key: _value(f"{field}.{key}", item, depth + 1) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(f"{field}[{index}]", item, depth + 1) for index, item in enumerate(value.list_value.values)]
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None


def non_negative(field: str, value: int, limit: int = MAX_COUNT) -> int:
    if value < 0:
        raise InvalidArgument(field, "must not be negative")
    if value > limit:
        raise InvalidArgument(field, f"is larger than {limit}")
    return value


def duration_us(field: str, message: duration_pb2.Duration, present: bool) -> int | None:
    if not present:
        return None
    if message.seconds < 0 or message.nanos < 0:
        raise InvalidArgument(field, "must not be negative")
    if not 0 <= message.nanos < 1_000_000_000:
        raise InvalidArgument(field, "nanos must be in [0, 1e9)")
    us = message.seconds * 1_000_000 + message.nanos // 1000
    if us > MAX_DURATION_US:
        raise InvalidArgument(field, "is longer than a year")
    return us


def timestamp_us(field: str, message: timestamp_pb2.Timestamp, present: bool) -> int | None:
    if not present:
        return None
    # Timestamp's valid range is years 1..9999 (RFC 3339).
    if not -62_135_596_800 <= message.seconds <= 253_402_300_799 or not 0 <= message.nanos < 1_000_000_000:
        raise InvalidArgument(field, "is outside the valid Timestamp range")
    return message.seconds * 1_000_000 + message.nanos // 1000


def as_of(field: str, message: Any, present: bool) -> AsOf | None:
    """An AsOf (a time or an event cursor) as the core's; None when unset (the read shows now)."""
    if not present:
        return None
    point = message.WhichOneof("point")
    if point == "time":
        return AsOf(time=timestamp_us(f"{field}.time", message.time, True))
    if point == "cursor":
        return AsOf(cursor=non_negative(f"{field}.cursor", message.cursor))
    raise InvalidArgument(field, "needs a time or a cursor")


def url(field: str, value: str) -> str:
    text(field, value, 2048)
    if value and not re.match(r"^https?://[^\s/]+", value):
        raise InvalidArgument(field, "must be an http or https URL")
    return value
