"""JSON in, gRPC out: the web view's calls go to the server's own services with the caller's key.

Every read and every action of the page is an ordinary RPC on an in-process channel, so validation,
namespaces, errors and events are exactly those of a gRPC client. Only the methods the page needs
are open; streams have their own endpoints in app.py.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message

from taskmem.api.scope import AGENT_HEADER, CORRELATION_HEADER, NAMESPACE_HEADER
from taskmem.v1 import checkpoint_service_pb2, memory_service_pb2, state_service_pb2, task_service_pb2, wait_service_pb2

# The methods the page calls, by service. Actions: UpdateTask (cancel, pause), UpdatePlanItem (answering a
# "may be finished" question), ResolveWait, CancelWait, PinStateItem, SetStateItemStatus, AnswerQuestion
# (answering an open question); everything else only reads.
OPEN_METHODS: dict[str, tuple[str, ...]] = {
    "TaskService": ("ListTasks", "UpdateTask", "GetPlan", "ListActions", "ListMessages", "ListContextSnapshots",
                    "GetProgress", "UpdatePlanItem"),
    "WaitService": ("ListWaits", "ResolveWait", "CancelWait"),
    "StateService": ("GetTaskState", "ListStateItems", "PinStateItem", "SetStateItemStatus", "AnswerQuestion",
                     "GetTaskStateHistory", "DiffTaskState"),
    "MemoryService": ("SearchMemories", "QueryKnowledge", "GetKnowledge", "ListEpisodes", "ListArtifacts"),
    "CheckpointService": ("ListCheckpoints",),
}
_FILES = {"TaskService": task_service_pb2, "WaitService": wait_service_pb2,
          "StateService": state_service_pb2, "MemoryService": memory_service_pb2,
          "CheckpointService": checkpoint_service_pb2}

# gRPC status → HTTP status of the JSON error reply.
_HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401, grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404, grpc.StatusCode.ALREADY_EXISTS: 409, grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409, grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503, grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}
# Headers of the web request passed on as call metadata.
FORWARDED_HEADERS = ("authorization", NAMESPACE_HEADER, CORRELATION_HEADER, AGENT_HEADER)


class GatewayError(Exception):
    """A call that did not succeed: the HTTP status and a JSON body naming the gRPC code."""

    def __init__(self, http_status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.http_status = http_status
        self.body = {"code": code, "message": message}


@dataclasses.dataclass(frozen=True)
class _Method:
    path: str
    request_class: type[Message]
    response_class: type[Message]


def _open_methods() -> dict[tuple[str, str], _Method]:
    methods = {}
    for service, names in OPEN_METHODS.items():
        descriptor = _FILES[service].DESCRIPTOR.services_by_name[service]
        for name in names:
            method: MethodDescriptor = descriptor.methods_by_name[name]
            methods[(service, name)] = _Method(
                f"/{descriptor.full_name}/{name}", message_factory.GetMessageClass(method.input_type),
                message_factory.GetMessageClass(method.output_type))
    return methods


def to_json(message: Message) -> dict[str, Any]:
    """Proto JSON with the proto field names, every field present (the page never guesses defaults)."""
    result: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
    return result


def call_metadata(headers: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple((name, headers[name]) for name in FORWARDED_HEADERS if headers.get(name))


def http_error(error: grpc.aio.AioRpcError) -> GatewayError:
    code = error.code()
    return GatewayError(_HTTP_STATUS.get(code, 500), code.name, error.details() or code.name)


class Gateway:
    """Calls the open methods on one channel to the server itself."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._channel = channel
        self._methods = _open_methods()

    async def call(self, service: str, method: str, body: Any, metadata: tuple[tuple[str, str], ...]) -> dict[str, Any]:
        found = self._methods.get((service, method))
        if found is None:
            raise GatewayError(404, "NOT_FOUND", f"{service}/{method} is not open to the web view")
        if not isinstance(body, dict):
            raise GatewayError(400, "INVALID_ARGUMENT", "the request body must be a JSON object")
        try:
            request = json_format.ParseDict(body, found.request_class())
        except json_format.ParseError as error:
            raise GatewayError(400, "INVALID_ARGUMENT", str(error)) from None
        stub = self._channel.unary_unary(found.path, request_serializer=found.request_class.SerializeToString,
                                         response_deserializer=found.response_class.FromString)
        try:
            response = await stub(request, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            raise http_error(error) from None
        return to_json(response)
