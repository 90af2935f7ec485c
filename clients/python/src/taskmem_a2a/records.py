"""A2A tasks kept as taskmem tasks: where each one lives, and how it is read and written.

An A2A task is one taskmem task in the namespace of its owner. Its taskmem metadata key "a2a" holds
the A2A Task itself (proto JSON), its version (1, 2, 3, ...: one per write) and the A2A event that
made the write, so each write's TASK_UPDATED event carries that A2A event to every subscriber on
every replica. A knowledge entry (category FACT, key "a2a.task/<id>") maps the A2A id to the
taskmem id; its first write carries a request_id made from the key, so of two replicas creating
the same task only one wins (the other's CreateTask result is cancelled). Writes compare-and-swap
on the taskmem etag.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable
from typing import Any

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.server.owner_resolver import resolve_user_scope
from a2a.types.a2a_pb2 import StreamResponse, Task
from a2a.utils.proto_utils import to_stream_response
from google.protobuf import field_mask_pb2, json_format, struct_pb2

from taskmem.v1 import memory_pb2, memory_service_pb2, task_pb2, task_service_pb2
from taskmem_a2a.transcript import transcript_content
from taskmem_client import TaskmemClient, TaskmemError

METADATA_KEY = "a2a"
SOURCE = "a2a"
FACT = memory_pb2.KNOWLEDGE_CATEGORY_FACT

# The owner of a call -> the taskmem namespace its tasks live in ("" is the client's own namespace).
NamespaceResolver = Callable[[ServerCallContext], str]


def owner_namespace(context: ServerCallContext) -> str:
    """The default resolver: the A2A owner (the authenticated user's name) is the namespace; an
    unauthenticated caller's tasks are in the client's own namespace."""
    return resolve_user_scope(context)


def id_key(task_id: str) -> str:
    """A key part for an A2A task id: the id when it is short and plain, else its SHA-256 (ids are
    free text; knowledge keys are at most 200 characters and "/" separates their parts)."""
    if re.fullmatch(r"[A-Za-z0-9._:-]{1,100}", task_id):
        return task_id
    return "sha256-" + hashlib.sha256(task_id.encode()).hexdigest()


def request_id(*parts: str) -> str:
    """A request_id (at most 64 characters) the same on every replica for the same write."""
    return "a2a-" + hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:56]


@dataclasses.dataclass(frozen=True)
class Location:
    namespace: str
    taskmem_id: str


@dataclasses.dataclass
class Record:
    """One A2A task as stored: the A2A task, its version, and the taskmem task holding it."""

    location: Location
    task: Task
    version: int
    etag: str
    status: int


def event_json(event: Event) -> dict[str, Any]:
    return json_format.MessageToDict(to_stream_response(event), preserving_proto_field_name=True)


def event_from_json(data: dict[str, Any]) -> Event:
    response = json_format.ParseDict(data, StreamResponse(), ignore_unknown_fields=True)
    payload = response.WhichOneof("payload")
    if payload is None:
        raise ValueError("an A2A event with no payload")
    event: Event = getattr(response, payload)
    return event


def record_of(location: Location, task: task_pb2.Task) -> Record | None:
    """The A2A record a taskmem task holds; None for a task that is not (or no longer) an A2A task."""
    if task.status == task_pb2.TASK_STATUS_ARCHIVED or METADATA_KEY not in task.metadata.fields:
        return None
    stored = json_format.MessageToDict(task.metadata.fields[METADATA_KEY].struct_value,
                                       preserving_proto_field_name=True)
    a2a_task = json_format.ParseDict(stored.get("task", {}), Task(), ignore_unknown_fields=True)
    return Record(location, a2a_task, int(stored.get("version", 0)), task.etag, task.status)


class A2ATaskRecords:
    """The taskmem side shared by the task store, the event stream and the push-config store.

    client: a TaskmemClient whose key may act in every namespace the resolver names (create it
    without its own namespace when owners map to namespaces).
    """

    def __init__(self, client: TaskmemClient, *, namespace_for: NamespaceResolver = owner_namespace) -> None:
        self.client = client
        self.namespace_for = namespace_for
        # A2A id -> where it lives; the mapping never changes while the task exists.
        self._locations: dict[str, Location] = {}

    @staticmethod
    def metadata(namespace: str) -> tuple[tuple[str, str], ...]:
        return (("x-taskmem-namespace", namespace),) if namespace else ()

    def known_location(self, task_id: str) -> Location | None:
        """Where this process last saw task_id (the event stream and push dispatch have no caller)."""
        return self._locations.get(task_id)

    async def locate(self, task_id: str, namespace: str) -> Location | None:
        cached = self._locations.get(task_id)
        if cached is not None and cached.namespace == namespace:
            return cached
        try:
            found = await self.client.memory.GetKnowledge(memory_service_pb2.GetKnowledgeRequest(
                category=FACT, key=f"a2a.task/{id_key(task_id)}"), metadata=self.metadata(namespace))
        except TaskmemError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        location = Location(namespace, found.knowledge.value)
        self._locations[task_id] = location
        return location

    async def read(self, location: Location) -> Record | None:
        try:
            response = await self.client.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=location.taskmem_id),
                                                      metadata=self.metadata(location.namespace))
        except TaskmemError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return record_of(location, response.task)

    async def get(self, task_id: str, namespace: str) -> Record | None:
        location = await self.locate(task_id, namespace)
        return None if location is None else await self.read(location)

    async def create(self, task: Task, namespace: str) -> tuple[Location, str] | None:
        """A taskmem task (where, and its etag) for a new A2A task, claimed under its A2A id; None if
        another writer claimed the id first (an id is claimed once: ids are not reused after delete)."""
        goal = next((m for m in task.history), None)
        created = await self.client.tasks.CreateTask(task_service_pb2.CreateTaskRequest(
            name=f"A2A task {task.id}"[:200], goal=transcript_content(goal)[:20_000] if goal else "",
            metadata=_struct({"a2a_task_id": task.id, "a2a_context_id": task.context_id}),
            # Turned off: inferring plan steps from A2A chatter would be a guess about a plan A2A lacks.
            plan_inference_disabled=True), metadata=self.metadata(namespace))
        location = Location(namespace, created.task.id)
        key = f"a2a.task/{id_key(task.id)}"
        try:
            await self.client.memory.UpsertKnowledge(memory_service_pb2.UpsertKnowledgeRequest(
                category=FACT, key=key, value=location.taskmem_id, source=SOURCE,
                request_id=request_id(namespace, key)), metadata=self.metadata(namespace))
        except TaskmemError as error:
            if error.code() != grpc.StatusCode.INVALID_ARGUMENT or error.field != "request_id":
                raise
            await self.client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=location.taskmem_id, status=task_pb2.TASK_STATUS_CANCELLED),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])), metadata=self.metadata(namespace))
            return None
        self._locations[task.id] = location
        return location, created.task.etag

    async def write(self, location: Location, etag: str, status_steps: list[int], task: Task, version: int,
                    event: Event | None) -> task_pb2.Task:
        """Stores the A2A task at version with the event that made it, if etag is still current (ABORTED
        otherwise), moving the taskmem status along status_steps; returns the taskmem task."""
        stored: dict[str, Any] = {"task": json_format.MessageToDict(task, preserving_proto_field_name=True),
                                  "version": version}
        if event is not None:
            stored["event"] = event_json(event)
        paths = [f"metadata.{METADATA_KEY}"]
        change = task_pb2.Task(id=location.taskmem_id, etag=etag, metadata=_struct({METADATA_KEY: stored}))
        if status_steps:
            change.status = status_steps[0]
            paths.append("status")
        response = await self.client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
            task=change, update_mask=field_mask_pb2.FieldMask(paths=paths)), metadata=self.metadata(location.namespace))
        written = response.task
        for status in status_steps[1:]:
            # The A2A write has landed; the rest of a two-step move follows it without an etag. If a
            # newer write moved the status first, that write's status stands.
            try:
                response = await self.client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                    task=task_pb2.Task(id=location.taskmem_id, status=status),
                    update_mask=field_mask_pb2.FieldMask(paths=["status"])),
                    metadata=self.metadata(location.namespace))
            except TaskmemError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                break
            written = response.task
        return written

    def forget(self, task_id: str) -> None:
        self._locations.pop(task_id, None)


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct
