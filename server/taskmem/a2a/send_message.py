"""A2A SendMessage on taskmem: a message without a task id creates a task, one with a task id joins that
task's transcript, or, when the task waits on a person (INPUT_REQUIRED or AUTH_REQUIRED), answers the wait.
The caller's key decides the namespace; each write carries a request_id made from the message id, so a
client retrying a message (A2A message ids are unique) creates and posts it once."""

from __future__ import annotations

import grpc
from a2a.types.a2a_pb2 import Message, TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError, UnsupportedOperationError
from google.protobuf import struct_pb2

from taskmem.a2a.convert import CONTEXT_KEY, STREAMED_TYPES, TERMINAL, context_of
from taskmem.a2a.push_webhooks import check_config, set_webhook
from taskmem.v1 import task_pb2, task_service_pb2, wait_pb2, wait_service_pb2
from taskmem_a2a.records import request_id
from taskmem_a2a.transcript import transcript_content
from taskmem_client import TaskmemClient, TaskmemError

NAME_MAX = 200  # CreateTask's limit on name
ANSWER_MAX = 1_000  # ResolveWait's limit on result: a longer message joins the transcript and answers nothing
AWAITING_PERSON = (task_pb2.TASK_STATUS_INPUT_REQUIRED, task_pb2.TASK_STATUS_AUTH_REQUIRED)
GOAL_MAX = 20_000  # and on goal; the whole text is in the transcript

Metadata = tuple[tuple[str, str], ...]


def task_name(text: str) -> str:
    """The name of a task a message creates: the text's first non-blank line, trimmed."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= NAME_MAX else line[:NAME_MAX - 1] + "…"


def _once(*parts: str) -> str:
    """The request_id of one write of a message ("" when the message has no id: no retry protection)."""
    return request_id("SendMessage", *parts) if parts[-1] else ""


def _refusal(error: TaskmemError) -> Exception:
    """taskmem's refusal of a send as the A2A error a client can act on."""
    if error.code() == grpc.StatusCode.NOT_FOUND:
        return TaskNotFoundError()
    if error.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION):
        return InvalidParamsError(message=f"{error.field or 'message'}: {error.details()}")
    return error


async def send_message(client: TaskmemClient, message: Message, push: TaskPushNotificationConfig | None,
                       metadata: Metadata) -> tuple[task_pb2.Task, task_pb2.Message]:
    """The task the message created or joined, read after the message is in its transcript, and the message
    as stored. push (the request's configuration.task_push_notification_config) becomes the task's
    callback_url."""
    text = transcript_content(message)
    if not text.strip():
        raise InvalidParamsError(message="message: no content (send a text, file or data part)")
    if push is not None:
        check_config(push)
    try:
        if message.task_id:
            task = await _join(client, message, metadata)
        else:
            task = await _create(client, message, text, push, metadata)
        answer = await _answer(client, task, text, message.message_id, metadata)
        posted = answer or (await client.tasks.PostMessage(task_service_pb2.PostMessageRequest(
            task_id=task.id, role=task_pb2.MESSAGE_ROLE_USER, content=text,
            request_id=_once("post", task.id, message.message_id)), metadata=metadata)).message
        if push is not None and message.task_id:
            await set_webhook(client, task.id, push.url, metadata)
        read = await client.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=task.id), metadata=metadata)
        return read.task, posted
    except TaskmemError as error:
        raise _refusal(error) from None


async def _answer(client: TaskmemClient, task: task_pb2.Task, text: str, message_id: str,
                  metadata: Metadata) -> task_pb2.Message | None:
    """A message to a task waiting on a person answers the task's oldest open wait on a person (ResolveWait
    with the text, which posts it as the person's "[Input received] …" message and moves the task on); the
    answer as stored. None when the task waits on nobody, the text is too long for an answer, or another
    answer came first: the message then joins the transcript as any other."""
    if task.status not in AWAITING_PERSON or len(text) > ANSWER_MAX:
        return None
    listed = await client.waits.ListWaits(wait_service_pb2.ListWaitsRequest(
        task_id=task.id, statuses=[wait_pb2.WAIT_STATUS_WAITING], page_size=500), metadata=metadata)
    asks = [w for w in listed.waits if w.target.external.kind and not w.target.external.plan_item_id]
    if not asks:
        return None
    oldest = asks[-1]  # ListWaits lists newest first
    try:
        await client.waits.ResolveWait(wait_service_pb2.ResolveWaitRequest(
            wait_id=oldest.id, result=text, request_id=_once("answer", task.id, message_id)), metadata=metadata)
    except TaskmemError as error:
        if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
            return None  # answered (or cancelled) meanwhile
        raise
    return await _newest_answer(client, task.id, metadata)


async def _newest_answer(client: TaskmemClient, task_id: str, metadata: Metadata) -> task_pb2.Message:
    """The newest answer in the task's thread: the last USER message of kind WAIT."""
    newest, token = None, ""
    while True:
        page = await client.tasks.ListMessages(task_service_pb2.ListMessagesRequest(
            task_id=task_id, kinds=[task_pb2.MESSAGE_KIND_WAIT], page_size=500, page_token=token), metadata=metadata)
        newest = next((m for m in reversed(page.messages) if m.role == task_pb2.MESSAGE_ROLE_USER), newest)
        token = page.next_page_token
        if not token:
            assert newest is not None, "ResolveWait wrote no answer"
            return newest


async def _create(client: TaskmemClient, message: Message, text: str, push: TaskPushNotificationConfig | None,
                  metadata: Metadata) -> task_pb2.Task:
    """A new PENDING task in the caller's namespace; a contextId the message names is kept in its metadata."""
    task_metadata = struct_pb2.Struct()
    if message.context_id:
        task_metadata.update({CONTEXT_KEY: message.context_id})
    created = await client.tasks.CreateTask(task_service_pb2.CreateTaskRequest(
        name=task_name(text), goal=text[:GOAL_MAX], metadata=task_metadata,
        callback_url=push.url if push is not None else "",
        webhook_event_types=STREAMED_TYPES if push is not None else (),
        request_id=_once("create", message.message_id)), metadata=metadata)
    return created.task


async def _join(client: TaskmemClient, message: Message, metadata: Metadata) -> task_pb2.Task:
    """The task the message names, if it may take a message: not ended, and in the message's context."""
    try:
        task = (await client.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=message.task_id),
                                           metadata=metadata)).task
    except TaskmemError as error:
        if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
            raise TaskNotFoundError from None
        raise
    if message.context_id and message.context_id != context_of(task):
        raise InvalidParamsError(message=f"contextId {message.context_id} is not the context {context_of(task)}"
                                         f" of task {task.id}")
    if task.status in TERMINAL:
        raise UnsupportedOperationError(
            message=f"task {task.id} is in terminal state: {task_pb2.TaskStatus.Name(task.status)}")
    return task
