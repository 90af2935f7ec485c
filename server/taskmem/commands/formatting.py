"""How tasks, plans and events look on a terminal: short enum names, UTC times, tables, one-line events."""

from __future__ import annotations

import datetime
import json
from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format, timestamp_pb2
from google.protobuf.message import Message as ProtoMessage

from taskmem.v1 import event_pb2, task_pb2

# The payload part of an event line is cut to this many characters.
EVENT_PAYLOAD_WIDTH = 80


def short_enum_name(enum_type: Any, value: int, prefix: str) -> str:
    """TASK_STATUS_EXECUTING → "executing"; a value this client does not know → its number."""
    try:
        name: str = enum_type.Name(value)
    except ValueError:
        return str(value)
    return name.removeprefix(prefix).lower()


def task_status_name(value: int) -> str:
    return short_enum_name(task_pb2.TaskStatus, value, "TASK_STATUS_")


def plan_item_status_name(value: int) -> str:
    return short_enum_name(task_pb2.PlanItemStatus, value, "PLAN_ITEM_STATUS_")


def event_type_name(value: int) -> str:
    return short_enum_name(event_pb2.EventType, value, "EVENT_TYPE_")


def parse_short_enum(enum_type: Any, prefix: str, text: str, what: str) -> int:
    """The inverse of short_enum_name: "executing", "EXECUTING" or "TASK_STATUS_EXECUTING" → the enum value.

    The unspecified value (0) is never a choice; anything else raises ValueError listing the choices."""
    name = text.strip().upper()
    value = 0
    try:
        value = enum_type.Value(name if name.startswith(prefix) else prefix + name)
    except ValueError:
        pass
    if not value:
        choices = ", ".join(short_enum_name(enum_type, known, prefix) for known in enum_type.values() if known)
        raise ValueError(f"unknown {what} {text!r} (choose from {choices})")
    return value


def parse_task_status(text: str) -> task_pb2.TaskStatus.ValueType:
    return parse_short_enum(task_pb2.TaskStatus, "TASK_STATUS_", text, "status")


def parse_event_type(text: str) -> event_pb2.EventType.ValueType:
    return parse_short_enum(event_pb2.EventType, "EVENT_TYPE_", text, "event type")


def is_set(timestamp: timestamp_pb2.Timestamp) -> bool:
    return timestamp.seconds != 0 or timestamp.nanos != 0


def display_time(timestamp: timestamp_pb2.Timestamp) -> str:
    """A UTC time to the second, "2026-11-22T13:30:06Z"; "-" when unset."""
    if not is_set(timestamp):
        return "-"
    moment = datetime.datetime.fromtimestamp(timestamp.seconds, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def one_line(text: str, width: int) -> str:
    """The text on one line, cut to width characters with "…" when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns two spaces apart; the last column is not padded."""
    widths = [max(len(str(row[column])) for row in [headers, *rows]) for column in range(len(headers))]
    lines = []
    for row in [headers, *rows]:
        cells = [str(cell).ljust(width) for cell, width in zip(row[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*cells, str(row[-1])]).rstrip())
    return lines


def proto_json_dict(message: ProtoMessage) -> dict[str, Any]:
    """A message as proto JSON with its .proto field names and every field present (defaults included).
    Whole numbers are ints: a Struct keeps every number as a double, so a caller's `0` would read `0.0`."""
    return _whole_numbers_as_ints(json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True))


def _whole_numbers_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: _whole_numbers_as_ints(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_whole_numbers_as_ints(item) for item in value]
    return value


def _enum_tail(value: object, prefix: str) -> str:
    return str(value).removeprefix(prefix).lower() if value else "?"


def event_payload_summary(event: event_pb2.Event) -> str:
    """The few words of an event's payload a person wants to see, by event type."""
    payload = json_format.MessageToDict(event.payload)
    kind = event.type
    if kind in (event_pb2.EVENT_TYPE_TASK_CREATED, event_pb2.EVENT_TYPE_TASK_UPDATED):
        return f"{payload.get('name', '')}"
    if kind == event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED:
        return f"{_enum_tail(payload.get('from'), 'TASK_STATUS_')} → {_enum_tail(payload.get('to'), 'TASK_STATUS_')}"
    if kind == event_pb2.EVENT_TYPE_PLAN_REPLACED:
        items = payload.get("items", [])
        reason = payload.get("reason", "")
        count = f"{len(items)} item{'' if len(items) == 1 else 's'}"
        return f"v{int(payload.get('version', 0))}, {count}" + (f": {reason}" if reason else "")
    if kind == event_pb2.EVENT_TYPE_PLAN_ITEM_UPDATED:
        status = _enum_tail(payload.get("status"), "PLAN_ITEM_STATUS_")
        inference = payload.get("inference")
        said = f" (inferred from \"{inference.get('evidence', '')}\")" if isinstance(inference, dict) else ""
        return f"{payload.get('id', '')} {status}{said}: {payload.get('title', '')}"
    if kind in (event_pb2.EVENT_TYPE_ACTION_RECORDED, event_pb2.EVENT_TYPE_ACTION_COMPLETED):
        status = _enum_tail(payload.get("status"), "ACTION_STATUS_")
        kind_name = _enum_tail(payload.get("type"), "ACTION_TYPE_")
        return f"{payload.get('id', '')} {status} {kind_name}: {payload.get('summary', '')}"
    if kind == event_pb2.EVENT_TYPE_ACTION_LOG_APPENDED:
        first, last = int(payload.get("first_sequence", 0)), int(payload.get("last_sequence", 0))
        return f"{payload.get('action_id', '')} lines {first}-{last}"
    if kind == event_pb2.EVENT_TYPE_MESSAGE_POSTED:
        return f"{_enum_tail(payload.get('role'), 'MESSAGE_ROLE_')}: {payload.get('content', '')}"
    if kind == event_pb2.EVENT_TYPE_CONTEXT_SNAPSHOT_RECORDED:
        return f"{payload.get('label', '')}"
    if "id" in payload and "status" in payload:  # waits and anything shaped like a resource
        status = str(payload["status"]).split("_STATUS_")[-1].lower()
        return f"{payload['id']} {status}"
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def event_line(event: event_pb2.Event) -> str:
    """cursor, time, type, task, short payload — one line per event."""
    head = (f"{event.cursor:>6}  {display_time(event.create_time)}  {event_type_name(event.type):<25}  "
            f"{event.task_id or '-':<30}  ")
    return head + one_line(event_payload_summary(event), EVENT_PAYLOAD_WIDTH)
