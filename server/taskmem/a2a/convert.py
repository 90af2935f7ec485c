"""taskmem tasks, messages, artifacts and events as A2A objects (no I/O). The state table is taskmem_a2a.states."""

from __future__ import annotations

from a2a.types.a2a_pb2 import (
    Artifact,
    Message,
    Part,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from google.protobuf import json_format, struct_pb2

from taskmem.v1 import event_pb2, memory_pb2, task_pb2
from taskmem_a2a.states import a2a_state

# The taskmem event cursor each streamed event carries in its metadata; resume after it with the
# x-taskmem-after-cursor header on SubscribeToTask (taskmem's extension: A2A itself has no resume).
CURSOR_KEY = "taskmem_cursor"
TERMINAL = frozenset({task_pb2.TASK_STATUS_COMPLETED, task_pb2.TASK_STATUS_FAILED, task_pb2.TASK_STATUS_CANCELLED,
                      task_pb2.TASK_STATUS_ARCHIVED})
# The task metadata key holding the contextId a SendMessage that created the task named.
CONTEXT_KEY = "a2a_context_id"


def context_of(task: task_pb2.Task) -> str:
    """The task's A2A contextId: the one its creating message named, else the task id (a taskmem task is
    its own conversation)."""
    named = task.metadata.fields.get(CONTEXT_KEY)
    return named.string_value if named is not None and named.string_value else task.id


def status_of(task: task_pb2.Task) -> TaskStatus:
    status = TaskStatus(state=a2a_state(task.status))
    status.timestamp.CopyFrom(task.update_time)
    summary = task.error_summary.message if task.status == task_pb2.TASK_STATUS_FAILED else task.final_answer
    if summary:
        status.message.CopyFrom(Message(message_id=f"{task.id}-status", task_id=task.id, context_id=context_of(task),
                                        role=Role.ROLE_AGENT, parts=[Part(text=summary)]))
    return status


def message_of(message: task_pb2.Message, context_id: str) -> Message:
    role = Role.ROLE_USER if message.role == task_pb2.MESSAGE_ROLE_USER else Role.ROLE_AGENT
    return Message(message_id=message.id, task_id=message.task_id, context_id=context_id, role=role,
                   parts=[Part(text=message.content)])


def artifact_of(artifact: memory_pb2.Artifact) -> Artifact:
    data = struct_pb2.Value()
    data.struct_value.update({"path": artifact.path, "sha256": artifact.sha256, "size_bytes": artifact.size_bytes,
                              "type": memory_pb2.ArtifactType.Name(artifact.type)})
    return Artifact(artifact_id=artifact.id, name=artifact.path, description=artifact.description,
                    parts=[Part(data=data)])


def task_of(task: task_pb2.Task, messages: list[task_pb2.Message] = (),  # type: ignore[assignment]
            artifacts: list[memory_pb2.Artifact] = ()) -> Task:  # type: ignore[assignment]
    """An A2A task: context_id as context_of says."""
    context_id = context_of(task)
    converted = Task(id=task.id, context_id=context_id, status=status_of(task),
                     history=[message_of(m, context_id) for m in messages],
                     artifacts=[artifact_of(a) for a in artifacts])
    converted.metadata.update({"name": task.name, "goal": task.goal,
                               "taskmem_status": task_pb2.TaskStatus.Name(task.status)})
    return converted


def stream_event_of(event: event_pb2.Event, state: int,
                    context_id: str) -> TaskStatusUpdateEvent | TaskArtifactUpdateEvent | None:
    """The A2A event a taskmem event of a task in context_id is (a posted message comes as a status update
    in the task's current state), or None for one A2A has no word for (plans, actions, state items)."""
    payload = json_format.MessageToDict(event.payload, preserving_proto_field_name=True)
    converted: TaskStatusUpdateEvent | TaskArtifactUpdateEvent
    if event.type == event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED:
        # The payload is the Task with "from" and "to" beside its fields (event.proto says {"from",
        # "to", "task"}; the server has always sent it flat).
        task = json_format.ParseDict(payload.get("task", payload), task_pb2.Task(), ignore_unknown_fields=True)
        converted = TaskStatusUpdateEvent(task_id=event.task_id, context_id=context_id, status=status_of(task))
    elif event.type == event_pb2.EVENT_TYPE_MESSAGE_POSTED:
        message = json_format.ParseDict(payload, task_pb2.Message(), ignore_unknown_fields=True)
        status = TaskStatus(state=state, message=message_of(message, context_id))  # type: ignore[arg-type]
        status.timestamp.CopyFrom(event.create_time)
        converted = TaskStatusUpdateEvent(task_id=event.task_id, context_id=context_id, status=status)
    elif event.type == event_pb2.EVENT_TYPE_ARTIFACT_REGISTERED:
        artifact = json_format.ParseDict(payload, memory_pb2.Artifact(), ignore_unknown_fields=True)
        converted = TaskArtifactUpdateEvent(task_id=event.task_id, context_id=context_id,
                                            artifact=artifact_of(artifact))
    else:
        return None
    converted.metadata.update({CURSOR_KEY: event.cursor})
    return converted


STREAMED_TYPES = (event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED, event_pb2.EVENT_TYPE_MESSAGE_POSTED,
                  event_pb2.EVENT_TYPE_ARTIFACT_REGISTERED)
