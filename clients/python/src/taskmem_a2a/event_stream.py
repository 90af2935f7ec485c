"""TaskEventStream on taskmem's SubscribeEvents: live, resumable, no polling."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from a2a.server.cluster.event_stream import TaskEventStream, VersionedEvent
from a2a.server.cluster.version import TaskVersion
from google.protobuf import json_format

from taskmem.v1 import event_pb2
from taskmem_a2a.records import METADATA_KEY, A2ATaskRecords, event_from_json


class TaskmemTaskEventStream(TaskEventStream):
    """Every replica's writes of a task, as they commit.

    A TaskmemTaskStore write commits the A2A event with the task (the taskmem TASK_UPDATED event
    carries both), so publish has nothing to send. subscribe follows the taskmem task's events from
    the database, then live with no gap, and the client resumes a broken stream after its last
    cursor, so a subscriber sees each version once, in order, across replicas and restarts.
    """

    def __init__(self, records: A2ATaskRecords) -> None:
        self.records = records

    async def publish(self, task_id: str, event: VersionedEvent) -> None:
        """Nothing to do: the store's write already committed the event."""

    async def subscribe(self, task_id: str, *, after: TaskVersion) -> AsyncGenerator[VersionedEvent, None]:
        """The events of task_id's versions after `after`. The task must have been read or written
        through this process's store first (the request handler reads it before subscribing): that
        tells which namespace it lives in. A task never seen here is looked up in the client's own namespace."""
        location = self.records.known_location(task_id) or await self.records.locate(task_id, "")
        if location is None:
            return
        # From the task's first event: a version is not a cursor, so the versions up to `after` are
        # replayed from the database and skipped here.
        events = self.records.client.subscribe(task_ids=[location.taskmem_id],
                                               types=[event_pb2.EVENT_TYPE_TASK_UPDATED], after_cursor=0,
                                               metadata=self.records.metadata(location.namespace))
        last = after
        async for event in events:
            versioned = _versioned_event(json_format.MessageToDict(event.payload, preserving_proto_field_name=True))
            if versioned is not None and versioned.version.is_after(last):
                last = versioned.version
                yield versioned

    async def destroy(self, task_id: str) -> None:
        """Nothing to release: a subscription is one taskmem stream, closed when its reader stops."""


def _versioned_event(task: dict[str, Any]) -> VersionedEvent | None:
    """The A2A event a TASK_UPDATED payload (a taskmem Task) carries; None for a write without one."""
    stored = task.get("metadata", {}).get(METADATA_KEY)
    if not isinstance(stored, dict) or "event" not in stored:
        return None
    return VersionedEvent(event=event_from_json(stored["event"]), version=TaskVersion(int(stored["version"])))
