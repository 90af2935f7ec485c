"""`taskmem a2a` push-notification configs: an A2A client's config becomes the task's callback_url, and
taskmem's signed webhooks reach a loopback receiver (verified with the Standard Webhooks library)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
import httpx
import pytest

pytest.importorskip("a2a", reason="the a2a extra: pip install -e '.[a2a]'")

from a2a.client import ClientConfig, create_client  # noqa: E402
from a2a.client.card_resolver import A2ACardResolver  # noqa: E402
from a2a.types.a2a_pb2 import (  # noqa: E402
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    TaskPushNotificationConfig,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError  # noqa: E402
from google.protobuf import field_mask_pb2  # noqa: E402

from taskmem.v1 import task_pb2, task_service_pb2  # noqa: E402
from taskmem_client import TaskmemClient  # noqa: E402
from tests.a2a.agent_process import AgentProcess  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402
from tests.support.webhook_receiver import WebhookReceiver  # noqa: E402


# A failed attempt (a busy machine) is retried within a second, not after the default backoff.
FAST_RETRIES = {"TASKMEM_WEBHOOK_BACKOFF_INITIAL_SECONDS": "0.2", "TASKMEM_WEBHOOK_BACKOFF_MAX_SECONDS": "0.8",
                "TASKMEM_WEBHOOK_ATTEMPT_TIMEOUT_SECONDS": "2"}


async def received_types(receiver: WebhookReceiver, task_id: str, want: list[str], timeout: float = 30) -> list[str]:
    """The event types POSTed for the task, once they include every type in want."""
    deadline = time.monotonic() + timeout
    while True:
        types = [r.body["event"]["type"] for r in list(receiver.received) if r.body["task_id"] == task_id]
        if all(types.count(t) >= want.count(t) for t in want) or time.monotonic() > deadline:
            return types
        await asyncio.sleep(0.05)


async def test_a_push_config_set_over_a2a_sends_the_tasks_events_as_signed_webhooks(
        tmp_path: Path, receiver: WebhookReceiver) -> None:
    server = ServerProcess(tmp_path / "push.db", env={**FAST_RETRIES,
                                                      "TASKMEM_WEBHOOK_ALLOWED_HOSTS": f"127.0.0.1:{receiver.port}"})
    server.start()
    front_end = AgentProcess(server.address, front_end=True)
    front_end.start()
    try:
        async with TaskmemClient(server.address) as taskmem:
            receiver.secret = (await taskmem.tasks.GetWebhookSecret(task_service_pb2.GetWebhookSecretRequest())).secret
            task = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="report"))).task
            client = await create_client(front_end.url, ClientConfig(streaming=True))

            created = await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url=receiver.url))
            assert (created.id, created.url) == (task.id, receiver.url)
            await taskmem.tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
                task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_EXECUTING),
                update_mask=field_mask_pb2.FieldMask(paths=["status"])))
            await taskmem.tasks.PostMessage(task_service_pb2.PostMessageRequest(
                task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="draft written"))

            types = await received_types(receiver, task.id,
                                         ["EVENT_TYPE_TASK_STATUS_CHANGED", "EVENT_TYPE_MESSAGE_POSTED"])
            assert types == ["EVENT_TYPE_TASK_STATUS_CHANGED", "EVENT_TYPE_MESSAGE_POSTED"]
            posted = next(r for r in receiver.received if r.body["event"]["type"] == "EVENT_TYPE_MESSAGE_POSTED")
            assert posted.body["event"]["payload"]["content"] == "draft written"
            assert receiver.rejected == []  # every request verified with the namespace's secret

            # The same config through the gRPC binding, then deleted: the task has no callback_url again.
            async with httpx.AsyncClient() as http:
                card = await A2ACardResolver(http, front_end.url).get_agent_card()
            assert card.capabilities.push_notifications
            over_grpc = await create_client(card, ClientConfig(supported_protocol_bindings=["GRPC"],
                                                               grpc_channel_factory=grpc.aio.insecure_channel))
            listed = await over_grpc.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id))
            assert [(c.id, c.url) for c in listed.configs] == [(task.id, receiver.url)]
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=task.id))
            assert not (await client.list_task_push_notification_configs(
                ListTaskPushNotificationConfigsRequest(task_id=task.id))).configs
            with pytest.raises(TaskNotFoundError):
                await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id=task.id))
            stored = (await taskmem.tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=task.id))).task
            assert stored.callback_url == "" and list(stored.webhook_event_types) == []
    finally:
        front_end.stop()
        server.stop()


async def test_a_push_config_taskmem_cannot_honour_is_refused_naming_why(server: ServerProcess) -> None:
    front_end = AgentProcess(server.address, front_end=True)
    front_end.start()
    try:
        async with TaskmemClient(server.address) as taskmem:
            task = (await taskmem.tasks.CreateTask(task_service_pb2.CreateTaskRequest(name="refusals"))).task
        client = await create_client(front_end.url, ClientConfig(streaming=True))
        url = "http://127.0.0.1:9/hook"
        with pytest.raises(InvalidParamsError, match="signs each webhook"):
            await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url=url, token="t0k"))
        with pytest.raises(InvalidParamsError, match="signs each webhook"):
            await client.create_task_push_notification_config(TaskPushNotificationConfig(
                task_id=task.id, url=url, authentication=AuthenticationInfo(scheme="Bearer", credentials="x")))
        with pytest.raises(InvalidParamsError, match="one push config per task"):
            await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, id="second", url=url))
        with pytest.raises(InvalidParamsError, match="url"):
            await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task.id, url="ftp://example.test/x"))
        with pytest.raises(TaskNotFoundError):
            await client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id="tsk_000000000000000000000000", url=url))
    finally:
        front_end.stop()
