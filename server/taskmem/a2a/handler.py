"""An a2a-sdk RequestHandler over taskmem's TaskService: each A2A call is taskmem calls made with the
caller's own bearer key, so taskmem's keys and namespaces decide what a caller may see."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import RequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetExtendedAgentCardRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTaskPushNotificationConfigsResponse,
    ListTasksRequest,
    ListTasksResponse,
    Message,
    SendMessageRequest,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskStatusUpdateEvent,
)
from a2a.utils.errors import (
    ExtendedAgentCardNotConfiguredError,
    InternalError,
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)

from a2a.utils.task import HistoryLengthConfig, apply_history_length, validate_history_length
from google.protobuf import field_mask_pb2

from taskmem.a2a.convert import STREAMED_TYPES, TERMINAL, context_of, status_of, stream_event_of, task_of
from taskmem.a2a.push_webhooks import check_config, config_of, set_webhook
from taskmem.a2a.send_message import send_message
from taskmem.v1 import event_pb2, memory_service_pb2, task_pb2, task_service_pb2
from taskmem_a2a.list_page import list_page
from taskmem_a2a.task_store import TERMINAL_STATES
from taskmem_client import TaskmemClient, TaskmemError

AFTER_CURSOR_HEADER = "x-taskmem-after-cursor"


# Forwarded to taskmem as they came: the caller's key, and the agent it says it is (events record it).
FORWARDED_HEADERS = ("authorization", "x-taskmem-agent")


def caller_metadata(context: ServerCallContext) -> tuple[tuple[str, str], ...]:
    """The caller's authorization and x-taskmem-agent headers, forwarded to taskmem."""
    headers = context.state.get("headers", {})
    return tuple((name, headers[name]) for name in FORWARDED_HEADERS if headers.get(name))


class TaskmemRequestHandler(RequestHandler):
    """SendMessage (a new task, or a message to one), GetTask, ListTasks, CancelTask, SubscribeToTask and
    push configs (a task's callback_url) on taskmem's tasks. No agent runs here: an agent works a task a
    message created through taskmem, and A2A clients see what it writes."""

    def __init__(self, client: TaskmemClient) -> None:
        self.client = client

    async def _task(self, task_id: str, context: ServerCallContext) -> task_pb2.Task:
        try:
            return (await self.client.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=task_id),
                                                    metadata=caller_metadata(context))).task
        except TaskmemError as error:
            if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                raise TaskNotFoundError from None
            raise

    async def _a2a_task(self, task: task_pb2.Task, history: HistoryLengthConfig | None,
                        context: ServerCallContext) -> Task:
        """The A2A task with its transcript (history, cut as history asks) and registered artifacts."""
        metadata = caller_metadata(context)
        messages = await self.client.tasks.ListMessages(
            task_service_pb2.ListMessagesRequest(task_id=task.id, page_size=500), metadata=metadata)
        artifacts = await self.client.memory.ListArtifacts(
            memory_service_pb2.ListArtifactsRequest(task_id=task.id, page_size=500), metadata=metadata)
        return apply_history_length(task_of(task, list(messages.messages), list(artifacts.artifacts)), history)

    async def on_get_task(self, params: GetTaskRequest, context: ServerCallContext) -> Task | None:
        return await self._a2a_task(await self._task(params.id, context), params, context)

    async def on_list_tasks(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        found: list[Task] = []
        token = ""
        while True:
            page = await self.client.tasks.ListTasks(task_service_pb2.ListTasksRequest(page_size=500, page_token=token),
                                                     metadata=caller_metadata(context))
            found.extend(task_of(task) for task in page.tasks)
            token = page.next_page_token
            if not token:
                return list_page(found, params)

    async def on_cancel_task(self, params: CancelTaskRequest, context: ServerCallContext) -> Task | None:
        task = await self._task(params.id, context)
        if task.status in TERMINAL:
            raise TaskNotCancelableError
        try:
            cancelled = await self.client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_CANCELLED, etag=task.etag),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])), metadata=caller_metadata(context))
        except TaskmemError as error:
            if error.code() in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.ABORTED):
                raise TaskNotCancelableError from None
            raise
        return task_of(cancelled.task)

    async def on_subscribe_to_task(self, params: SubscribeToTaskRequest,
                                   context: ServerCallContext) -> AsyncGenerator[Task | object, None]:
        """The task now, then its status changes, messages and artifacts as they commit, until it ends.
        With the x-taskmem-after-cursor header (a taskmem_cursor an earlier stream's event carried), the
        events after that cursor are replayed first: a reconnecting client misses nothing."""
        after = context.state.get("headers", {}).get(AFTER_CURSOR_HEADER, "")
        if after and not after.lstrip("-").isdigit():
            raise InvalidParamsError(message=f"{AFTER_CURSOR_HEADER} must be a taskmem event cursor")
        # Without a cursor, follow from the task's newest event as it was before the task is read: what
        # commits between the read and the stream's start is sent (perhaps as well as shown), never lost.
        start = int(after) if after else await self._newest_cursor(params.id, context)
        task = await self._task(params.id, context)
        if task.status in TERMINAL:
            raise UnsupportedOperationError(message=f"task {task.id} is {task_pb2.TaskStatus.Name(task.status)}")
        yield task_of(task)
        async for event in self._follow(task, start, context):
            yield event

    async def _newest_cursor(self, task_id: str, context: ServerCallContext) -> int:
        """The cursor of the task's newest event (0 when it has none the caller may see)."""
        cursor, token = 0, ""
        while True:
            page = await self.client.tasks.ListEvents(task_service_pb2.ListEventsRequest(
                task_ids=[task_id], page_size=500, page_token=token), metadata=caller_metadata(context))
            if page.events:
                cursor = page.events[-1].cursor
            token = page.next_page_token
            if not token:
                return cursor

    async def _follow(self, task: task_pb2.Task, after_cursor: int,
                      context: ServerCallContext) -> AsyncGenerator[object, None]:
        """The task's events after after_cursor as A2A events, until the task ends."""
        state = status_of(task).state
        context_id = context_of(task)
        async for event in self.client.subscribe(task_ids=[task.id], types=STREAMED_TYPES, after_cursor=after_cursor,
                                                 metadata=caller_metadata(context)):
            converted = stream_event_of(event, state, context_id)
            if converted is None:
                continue
            yield converted
            if isinstance(converted, TaskStatusUpdateEvent) and converted.status.state != state:
                state = converted.status.state
                if state in TERMINAL_STATES:
                    return

    async def _send(self, params: SendMessageRequest,
                    context: ServerCallContext) -> tuple[task_pb2.Task, task_pb2.Message]:
        validate_history_length(params.configuration)
        push = (params.configuration.task_push_notification_config
                if params.configuration.HasField("task_push_notification_config") else None)
        return await send_message(self.client, params.message, push, caller_metadata(context))

    async def on_message_send(self, params: SendMessageRequest, context: ServerCallContext) -> Task | Message:
        """A new task from a message without a task id, else the message added to the named task's transcript
        (taskmem.a2a.send_message); the task is returned at once: no agent runs inside taskmem a2a."""
        task, _ = await self._send(params, context)
        return await self._a2a_task(task, params.configuration, context)

    async def on_message_send_stream(self, params: SendMessageRequest,
                                     context: ServerCallContext) -> AsyncGenerator[object, None]:
        """As on_message_send, then the task's events after the message, as SubscribeToTask sends them, until
        the task ends (an agent working the task through taskmem writes them)."""
        task, posted = await self._send(params, context)
        yield await self._a2a_task(task, params.configuration, context)
        async for event in self._follow(task, await self._cursor_of(posted, context), context):
            yield event

    async def _cursor_of(self, message: task_pb2.Message, context: ServerCallContext) -> int:
        """The cursor of the message's MESSAGE_POSTED event: the stream goes on after it, so what an agent
        writes after the message is sent (what it wrote before the task was read is sent twice, never lost)."""
        token = ""
        while True:
            page = await self.client.tasks.ListEvents(task_service_pb2.ListEventsRequest(
                task_ids=[message.task_id], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED], page_size=500,
                page_token=token), metadata=caller_metadata(context))
            for event in page.events:
                if event.payload.fields["id"].string_value == message.id:
                    return event.cursor
            token = page.next_page_token
            if not token:
                raise InternalError(message=f"task {message.task_id}: no event for message {message.id}")

    async def on_create_task_push_notification_config(
            self, params: TaskPushNotificationConfig, context: ServerCallContext) -> TaskPushNotificationConfig:
        """The task's callback_url becomes the config's url (taskmem.a2a.push_webhooks)."""
        check_config(params)
        task = await set_webhook(self.client, params.task_id, params.url, caller_metadata(context))
        return config_of(task)  # type: ignore[return-value]  # just set, so present

    async def on_get_task_push_notification_config(
            self, params: GetTaskPushNotificationConfigRequest,
            context: ServerCallContext) -> TaskPushNotificationConfig:
        config = config_of(await self._task(params.task_id, context))
        if config is None or params.id not in ("", config.id):
            raise TaskNotFoundError(message=f"task {params.task_id} has no push config {params.id!r}")
        return config

    async def on_list_task_push_notification_configs(
            self, params: ListTaskPushNotificationConfigsRequest,
            context: ServerCallContext) -> ListTaskPushNotificationConfigsResponse:
        config = config_of(await self._task(params.task_id, context))
        return ListTaskPushNotificationConfigsResponse(configs=[config] if config else [])

    async def on_delete_task_push_notification_config(
            self, params: DeleteTaskPushNotificationConfigRequest, context: ServerCallContext) -> None:
        config = config_of(await self._task(params.task_id, context))
        if config is not None and params.id in ("", config.id):
            await set_webhook(self.client, params.task_id, "", caller_metadata(context))

    async def on_get_extended_agent_card(self, params: GetExtendedAgentCardRequest,
                                         context: ServerCallContext) -> AgentCard:
        raise ExtendedAgentCardNotConfiguredError
