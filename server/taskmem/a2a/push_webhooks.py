"""A2A push-notification configs as taskmem's signed webhooks: a task's one config is its callback_url.

Creating a config sets the task's callback_url to the config's url and its webhook_event_types to the
events SubscribeToTask streams (status changes, messages, artifacts); deleting clears both. taskmem
then POSTs those events, signed the Standard Webhooks way with the namespace's secret, once the
receiver's host is on the server's webhook allow-list. What A2A asks for that this cannot give
(a token or credentials for the receiver, several configs per task, A2A's StreamResponse body) is
refused or documented in docs/a2a.md rather than accepted and dropped.
"""

from __future__ import annotations

import grpc
from a2a.types.a2a_pb2 import TaskPushNotificationConfig
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from google.protobuf import field_mask_pb2

from taskmem.a2a.convert import STREAMED_TYPES
from taskmem.v1 import task_pb2, task_service_pb2
from taskmem_client import TaskmemClient, TaskmemError

WEBHOOK_PATHS = field_mask_pb2.FieldMask(paths=["callback_url", "webhook_event_types"])


def config_of(task: task_pb2.Task) -> TaskPushNotificationConfig | None:
    """The task's push config (its id is the task id), or None when the task has no callback_url."""
    if not task.callback_url:
        return None
    return TaskPushNotificationConfig(id=task.id, task_id=task.id, url=task.callback_url)


def check_config(config: TaskPushNotificationConfig) -> None:
    """Refuse what a taskmem webhook cannot carry out, naming what to send instead."""
    if config.id not in ("", config.task_id):
        raise InvalidParamsError(message="taskmem keeps one push config per task: leave id empty or send the"
                                         " task id")
    if config.token or config.authentication.scheme or config.authentication.credentials:
        raise InvalidParamsError(message="taskmem signs each webhook with its namespace's secret (Standard"
                                         " Webhooks: webhook-signature; GetWebhookSecret) and sends no token or"
                                         " credentials: create the config without token and authentication")


async def set_webhook(client: TaskmemClient, task_id: str, url: str, metadata: tuple[tuple[str, str], ...]
                      ) -> task_pb2.Task:
    """The task with callback_url = url (and the streamed event types), or cleared when url is empty."""
    types = STREAMED_TYPES if url else ()
    try:
        return (await client.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
            task=task_pb2.Task(id=task_id, callback_url=url, webhook_event_types=types), update_mask=WEBHOOK_PATHS),
            metadata=metadata)).task
    except TaskmemError as error:
        if error.code() == grpc.StatusCode.NOT_FOUND or error.field == "task.id":
            raise TaskNotFoundError from None
        if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
            raise InvalidParamsError(message=f"url: {error.details()}") from None
        raise
