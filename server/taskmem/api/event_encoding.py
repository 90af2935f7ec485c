"""The encoder of every event's payload: a resource in its proto JSON form (original field names).

The store calls it on each write that emits an event, so each converter writes its JSON by hand rather than
through json_format (several times slower); state items are rare enough to go through json_format.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from taskmem.api import memory_convert, state_convert, task_convert, wait_convert
from taskmem.core.state_records import StoredStateItem
from taskmem.core.waits import Wait


def event_payload(resource: Any) -> dict[str, Any]:
    """The payload of the event a write of `resource` emits."""
    if isinstance(resource, Wait):
        return wait_convert.wait_json(resource)
    if memory_convert.is_memory_resource(resource):
        return memory_convert.event_json(resource)
    if isinstance(resource, StoredStateItem):
        return json_format.MessageToDict(state_convert.state_item(resource), preserving_proto_field_name=True)
    return task_convert.resource_json(resource)
