"""VersionedTaskStore on taskmem: an a2a-sdk server's tasks, durable and shared by its replicas."""

from __future__ import annotations

import dataclasses

import grpc
from a2a.server.cluster.task_store import ConcurrentTaskModificationError, StoredTask, VersionedTaskStore
from a2a.server.cluster.version import TaskVersion
from a2a.server.context import ServerCallContext
from a2a.server.events.event_queue import Event
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from google.protobuf import field_mask_pb2

from taskmem.v1 import memory_service_pb2, task_pb2, task_service_pb2
from taskmem_a2a import transcript
from taskmem_a2a.list_page import list_page
from taskmem_a2a.records import FACT, A2ATaskRecords, Location, id_key, record_of, request_id
from taskmem_a2a.states import status_steps, taskmem_status
from taskmem_client import TaskmemError

TERMINAL_STATES = frozenset({TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_CANCELED,
                             TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED})
# A cancel overwrites whatever non-final version is stored; it re-reads and retries this often when
# another write lands between its read and its write.
CANCEL_ATTEMPTS = 5


@dataclasses.dataclass(frozen=True)
class _Written:
    """A version of a task as this process last read or wrote it."""

    version: int
    etag: str
    status: int
    task: Task | None


class TaskmemTaskStore(VersionedTaskStore):
    """Keeps A2A tasks in taskmem (see taskmem_a2a.records for the layout).

    A task's version counts its writes (1, 2, ...); save compares and swaps on the taskmem etag of
    the version it was given, so a stale prev_version raises ConcurrentTaskModificationError. Each
    write also posts the task's new messages to its taskmem transcript and registers its new or
    changed artifacts, both idempotently (a retry or a second replica writes them once). "New" is
    against the version the write replaced, not the SDK's `prev` (the SDK updates its task in place).
    """

    def __init__(self, records: A2ATaskRecords) -> None:
        self.records = records
        # The etag of the last version this process read or wrote, so a save needs no read first.
        self._written: dict[str, _Written] = {}

    async def save(self, task: Task, *, event: Event | None, prev: Task | None, prev_version: TaskVersion,
                   context: ServerCallContext) -> TaskVersion:
        del prev  # see the class comment
        written = Task()
        written.CopyFrom(task)  # now: the caller may change its task while this write awaits
        namespace = self.records.namespace_for(context)
        if task.status.state == TaskState.TASK_STATE_CANCELED:
            location, replaced, taskmem_task = await self._cancel(task, event, namespace)
        elif prev_version.is_missing:
            location, replaced, taskmem_task = await self._create(task, event, namespace)
        else:
            location, replaced, taskmem_task = await self._update(task, event, prev_version, namespace)
        version = replaced.version + 1
        if await self._record_transcript(location, written, replaced.task):
            # Posting to the transcript moved the taskmem task's etag on: the next save reads it again.
            self._written.pop(task.id, None)
        else:
            self._written[task.id] = _Written(version, taskmem_task.etag, taskmem_task.status, written)
        return TaskVersion(version)

    async def _create(self, task: Task, event: Event | None,
                      namespace: str) -> tuple[Location, _Written, task_pb2.Task]:
        created = await self.records.create(task, namespace)
        if created is None:
            raise ConcurrentTaskModificationError(task.id)
        location, etag = created
        steps = status_steps(task_pb2.TASK_STATUS_PENDING, taskmem_status(task.status.state))
        return location, _Written(0, etag, task_pb2.TASK_STATUS_PENDING, None), await self._write(
            location, etag, steps, task, 1, event)

    async def _update(self, task: Task, event: Event | None, prev_version: TaskVersion,
                      namespace: str) -> tuple[Location, _Written, task_pb2.Task]:
        location = await self.records.locate(task.id, namespace)
        if location is None:
            raise ConcurrentTaskModificationError(task.id)
        known = self._written.get(task.id)
        if known is None or TaskVersion(known.version) != prev_version:
            record = await self.records.read(location)
            if record is None or TaskVersion(record.version) != prev_version:
                raise ConcurrentTaskModificationError(task.id)
            known = _Written(record.version, record.etag, record.status, record.task)
        steps = status_steps(known.status, taskmem_status(task.status.state))
        return location, known, await self._write(location, known.etag, steps, task, known.version + 1, event)

    async def _cancel(self, task: Task, event: Event | None,
                      namespace: str) -> tuple[Location, _Written, task_pb2.Task]:
        """A cancel overwrites any non-final version without a version check (the SDK's contract)."""
        for _ in range(CANCEL_ATTEMPTS):
            record = await self.records.get(task.id, namespace)
            if record is None or record.task.status.state in TERMINAL_STATES:
                raise ConcurrentTaskModificationError(task.id)
            steps = status_steps(record.status, task_pb2.TASK_STATUS_CANCELLED)
            try:
                written = await self.records.write(record.location, record.etag, steps, task, record.version + 1,
                                                   event)
            except TaskmemError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    raise
                continue
            return record.location, _Written(record.version, record.etag, record.status, record.task), written
        raise ConcurrentTaskModificationError(task.id)

    async def _write(self, location: Location, etag: str, steps: list[int], task: Task, version: int,
                     event: Event | None) -> task_pb2.Task:
        try:
            return await self.records.write(location, etag, steps, task, version, event)
        except TaskmemError as error:
            if error.code() == grpc.StatusCode.ABORTED:
                raise ConcurrentTaskModificationError(task.id) from error
            raise

    async def _record_transcript(self, location: Location, task: Task, prev: Task | None) -> bool:
        """The A2A messages and artifacts a write added, in taskmem's transcript and artifact registry;
        whether there were any."""
        metadata = self.records.metadata(location.namespace)
        messages, artifacts = transcript.new_messages(task, prev), transcript.changed_artifacts(task, prev)
        for message in messages:
            await self.records.client.tasks.PostMessage(task_service_pb2.PostMessageRequest(
                task_id=location.taskmem_id, role=transcript.transcript_role(message),
                kind=task_pb2.MESSAGE_KIND_TEXT, content=transcript.transcript_content(message),
                request_id=request_id(location.namespace, task.id, "message", message.message_id)),
                metadata=metadata)
        for artifact in artifacts:
            content = transcript.artifact_content(artifact)
            digest = transcript.checksum(content)
            await self.records.client.memory.RegisterArtifact(memory_service_pb2.RegisterArtifactRequest(
                task_id=location.taskmem_id, agent_id="a2a", type=transcript.artifact_type(artifact),
                path=f"a2a/{artifact.name or artifact.artifact_id}"[:1024],
                description=(artifact.description or artifact.name)[:4096], size_bytes=len(content),
                sha256=digest, request_id=request_id(location.namespace, task.id, "artifact",
                                                     artifact.artifact_id, digest)), metadata=metadata)
        return bool(messages or artifacts)

    async def get(self, task_id: str, context: ServerCallContext) -> StoredTask | None:
        record = await self.records.get(task_id, self.records.namespace_for(context))
        if record is None:
            return None
        kept = Task()
        kept.CopyFrom(record.task)  # the caller changes the task it gets in place
        self._written[task_id] = _Written(record.version, record.etag, record.status, kept)
        return StoredTask(record.task, TaskVersion(record.version))

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The owner's A2A tasks (the taskmem tasks of its namespace holding one), filtered and paged as
        the SDK's stores do; each call reads the namespace's unarchived tasks."""
        namespace = self.records.namespace_for(context)
        statuses = [taskmem_status(params.status)] if params.status else [
            s for s in task_pb2.TaskStatus.values() if s not in (task_pb2.TASK_STATUS_UNSPECIFIED,
                                                                 task_pb2.TASK_STATUS_ARCHIVED)]
        found: list[Task] = []
        token = ""
        while True:
            page = await self.records.client.tasks.ListTasks(task_service_pb2.ListTasksRequest(
                statuses=statuses, page_size=500, page_token=token), metadata=self.records.metadata(namespace))
            for taskmem_task in page.tasks:
                record = record_of(Location(namespace, taskmem_task.id), taskmem_task)
                if record is not None:
                    found.append(record.task)
            token = page.next_page_token
            if not token:
                return list_page(found, params)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Archives the taskmem task (cancelling it first if it was still going; its record stays, as
        taskmem keeps everything) and removes the A2A id, so the task is gone for A2A."""
        namespace = self.records.namespace_for(context)
        record = await self.records.get(task_id, namespace)
        if record is None:
            return
        metadata = self.records.metadata(namespace)
        steps = [] if record.status in (task_pb2.TASK_STATUS_COMPLETED, task_pb2.TASK_STATUS_FAILED,
                                        task_pb2.TASK_STATUS_CANCELLED) else [task_pb2.TASK_STATUS_CANCELLED]
        for status in [*steps, task_pb2.TASK_STATUS_ARCHIVED]:
            await self.records.client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=record.location.taskmem_id, status=status),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])), metadata=metadata)
        mapping = await self.records.client.memory.GetKnowledge(memory_service_pb2.GetKnowledgeRequest(
            category=FACT, key=f"a2a.task/{id_key(task_id)}"), metadata=metadata)
        await self.records.client.memory.DeleteKnowledge(
            memory_service_pb2.DeleteKnowledgeRequest(id=mapping.knowledge.id), metadata=metadata)
        self.records.forget(task_id)
        self._written.pop(task_id, None)

