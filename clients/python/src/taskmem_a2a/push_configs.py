"""PushNotificationConfigStore on taskmem: each config one knowledge entry in its owner's namespace."""

from __future__ import annotations

import json

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.tasks.push_notification_config_store import (
    PushNotificationConfigStore,
    normalize_push_notification_config,
)
from a2a.types.a2a_pb2 import TaskPushNotificationConfig
from google.protobuf import json_format

from taskmem.v1 import memory_service_pb2
from taskmem_a2a.records import FACT, SOURCE, A2ATaskRecords, id_key
from taskmem_client import TaskmemError


def _prefix(task_id: str) -> str:
    return f"a2a.push/{id_key(task_id)}/"


class TaskmemPushNotificationConfigStore(PushNotificationConfigStore):
    """Push configs keyed "a2a.push/<task>/<config>" (category FACT) in the namespace of the owner
    that set them, so an owner reads and deletes only its own. Dispatch reads them in the namespace
    where this process last saw the task (its own store wrote the task it is dispatching for)."""

    def __init__(self, records: A2ATaskRecords) -> None:
        self.records = records

    async def set_info(self, task_id: str, notification_config: TaskPushNotificationConfig,
                       context: ServerCallContext) -> TaskPushNotificationConfig:
        stored = normalize_push_notification_config(task_id, notification_config)
        await self.records.client.memory.UpsertKnowledge(memory_service_pb2.UpsertKnowledgeRequest(
            category=FACT, key=_prefix(task_id) + id_key(stored.id), source=SOURCE,
            value=json.dumps(json_format.MessageToDict(stored, preserving_proto_field_name=True))),
            metadata=self.records.metadata(self.records.namespace_for(context)))
        return stored

    async def get_info(self, task_id: str, context: ServerCallContext) -> list[TaskPushNotificationConfig]:
        return [config for _, config in await self._configs(task_id, self.records.namespace_for(context))]

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        location = self.records.known_location(task_id)
        return [config for _, config in await self._configs(task_id, location.namespace if location else "")]

    async def delete_info(self, task_id: str, context: ServerCallContext, config_id: str | None = None) -> None:
        namespace = self.records.namespace_for(context)
        for knowledge_id, config in await self._configs(task_id, namespace):
            if config_id is None or config.id == config_id:
                try:
                    await self.records.client.memory.DeleteKnowledge(
                        memory_service_pb2.DeleteKnowledgeRequest(id=knowledge_id),
                        metadata=self.records.metadata(namespace))
                except TaskmemError as error:
                    if error.code() != grpc.StatusCode.NOT_FOUND:  # deleted meanwhile: the outcome wanted
                        raise

    async def _configs(self, task_id: str, namespace: str) -> list[tuple[str, TaskPushNotificationConfig]]:
        found: list[tuple[str, TaskPushNotificationConfig]] = []
        token = ""
        while True:
            page = await self.records.client.memory.QueryKnowledge(memory_service_pb2.QueryKnowledgeRequest(
                category=FACT, key_prefix=_prefix(task_id), page_size=500, page_token=token),
                metadata=self.records.metadata(namespace))
            for entry in page.knowledge:
                config = json_format.ParseDict(json.loads(entry.value), TaskPushNotificationConfig(),
                                               ignore_unknown_fields=True)
                found.append((entry.id, config))
            token = page.next_page_token
            if not token:
                return found
