"""Waits: domain → protobuf, and their proto-JSON form for event payloads."""

from __future__ import annotations

import time
from typing import Any

from google.protobuf import json_format, struct_pb2

from taskmem.api import task_convert
from taskmem.api.task_convert import _compact, _duration_json
from taskmem.core.waits import (
    EventTarget, FileTarget, HttpTarget, TaskStatusTarget, Target, TimerTarget, Wait,
)
from taskmem.v1 import task_pb2, wait_pb2


def _time_json(us: int | None) -> str | None:
    """RFC 3339 in UTC with microseconds, as task_convert._time_json writes it, about five times faster
    (a burst of timers coming due formats thousands of these on the writer's path)."""
    if us is None:
        return None
    seconds, micros = divmod(us, 1_000_000)
    t = time.gmtime(seconds)
    return (f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
            f".{micros:06d}Z")


def _value(value: Any) -> struct_pb2.Value:
    """A stored JSON value as a Value for a reply, cut like a Struct (task_convert.within_depth)."""
    message = struct_pb2.Value()
    json_format.ParseDict(task_convert.within_depth(value, task_convert.READ_MAX_DEPTH), message)
    return message


def target(t: Target) -> wait_pb2.WaitTarget:
    if isinstance(t, TimerTarget):
        return wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=task_convert.duration(t.duration_us)))
    if isinstance(t, TaskStatusTarget):
        return wait_pb2.WaitTarget(task_status=wait_pb2.TaskStatusTarget(
            task_id=t.task_id, statuses=[task_pb2.TaskStatus.Value(s.value) for s in t.statuses]))
    if isinstance(t, EventTarget):
        return wait_pb2.WaitTarget(event=wait_pb2.EventTarget(
            task_id=t.task_id, type=t.type.value, payload_field=t.payload_field,
            payload_value=_value(t.payload_value) if t.payload_field else None))
    if isinstance(t, HttpTarget):
        return wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=t.url, expect_status=t.expect_status,
                                                           body_contains=t.body_contains))
    if isinstance(t, FileTarget):
        return wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=t.path, contains=t.contains))
    return wait_pb2.WaitTarget(external=wait_pb2.ExternalTarget(
        resolver=t.resolver, kind=t.kind.value, question=t.question, plan_item_id=t.plan_item_id))


def wait(w: Wait) -> wait_pb2.Wait:
    return wait_pb2.Wait(
        id=w.id, task_id=w.task_id, criteria=w.criteria, target=target(w.target), status=w.status.value,
        result=w.result, timeout=task_convert.duration(w.timeout_us), poll_interval=task_convert.duration(w.poll_interval_us),
        create_time=task_convert.timestamp(w.created_at), deadline_time=task_convert.timestamp(w.deadline_at),
        end_time=task_convert.timestamp(w.ended_at), forced=w.forced,
    )


def _target_json(t: Target) -> dict[str, Any]:
    if isinstance(t, TimerTarget):
        return {"timer": {"duration": _duration_json(t.duration_us)}}
    if isinstance(t, TaskStatusTarget):
        return {"task_status": {"task_id": t.task_id, "statuses": [s.value for s in t.statuses]}}
    if isinstance(t, EventTarget):
        fields = {"task_id": t.task_id, "type": t.type.value, "payload_field": t.payload_field}
        return {"event": {**_compact(fields), **({"payload_value": t.payload_value} if t.payload_field else {})}}
    if isinstance(t, HttpTarget):
        return {"http": _compact({"url": t.url, "expect_status": t.expect_status, "body_contains": t.body_contains})}
    if isinstance(t, FileTarget):
        return {"file": _compact({"path": t.path, "contains": t.contains})}
    kind = t.kind.value if t.on_person else ""
    return {"external": _compact({"resolver": t.resolver, "kind": kind, "question": t.question,
                                  "plan_item_id": t.plan_item_id})}


def wait_json(w: Wait) -> dict[str, Any]:
    return {**_compact({
        "id": w.id, "task_id": w.task_id, "criteria": w.criteria, "status": w.status.value, "result": w.result,
        "timeout": _duration_json(w.timeout_us), "poll_interval": _duration_json(w.poll_interval_us),
        "create_time": _time_json(w.created_at), "deadline_time": _time_json(w.deadline_at),
        "end_time": _time_json(w.ended_at), "forced": w.forced,
    }), "target": _target_json(w.target)}

