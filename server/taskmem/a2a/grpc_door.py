"""`taskmem a2a` over gRPC: the a2a-sdk's GrpcHandler on a grpc.aio server, behind the same door as the
HTTP bindings (a key-less caller refused when taskmem checks keys, each caller's key forwarded)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from a2a.server.context import ServerCallContext
from a2a.server.request_handlers import GrpcHandler, RequestHandler
from a2a.server.request_handlers.grpc_handler import DefaultGrpcServerCallContextBuilder
from a2a.types.a2a_pb2_grpc import add_A2AServiceServicer_to_server

from taskmem.api.method_wrapping import WrappingInterceptor
from taskmem_client import TaskmemError


class MetadataContextBuilder(DefaultGrpcServerCallContextBuilder):
    """Puts the call's metadata where the HTTP bindings put their headers (state["headers"], lower-case
    names), so the handler reads the bearer key and x-taskmem-after-cursor the same way on every binding."""

    def build(self, context: grpc.aio.ServicerContext) -> ServerCallContext:
        built = super().build(context)
        built.state["headers"] = {key.lower(): value for key, value in context.invocation_metadata() or ()
                                  if isinstance(value, str)}
        return built


class GrpcDoorInterceptor(WrappingInterceptor):
    """UNAUTHENTICATED for a call without a bearer key when taskmem checks keys; a refusal of taskmem's
    (a wrong key, a namespace the key may not see) reaches the caller with taskmem's own code and message
    instead of the UNKNOWN grpc.aio would make of an exception the SDK's handler does not map."""

    def __init__(self, keys_required: bool) -> None:
        super().__init__()
        self._keys_required = keys_required

    def _refusal(self, context: grpc.aio.ServicerContext) -> str:
        if not self._keys_required:
            return ""
        metadata = dict(context.invocation_metadata() or ())
        scheme, _, token = str(metadata.get("authorization", "")).partition(" ")
        return "" if scheme.lower() == "bearer" and token.strip() else \
            "unauthenticated: send authorization: Bearer <api key>"

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            unary: Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]] = handler.unary_unary

            async def guarded_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if refusal := self._refusal(context):
                    await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
                try:
                    return await unary(request, context)
                except TaskmemError as error:
                    await context.abort(error.code(), error.details() or "")

            return grpc.unary_unary_rpc_method_handler(guarded_unary, handler.request_deserializer,
                                                       handler.response_serializer)
        streaming: Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]] = handler.unary_stream

        async def guarded_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            if refusal := self._refusal(context):
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, refusal)
            try:
                async for response in streaming(request, context):
                    yield response
            except TaskmemError as error:
                await context.abort(error.code(), error.details() or "")

        return grpc.unary_stream_rpc_method_handler(guarded_stream, handler.request_deserializer,
                                                    handler.response_serializer)


async def start_grpc_door(handler: RequestHandler, listen: str, keys_required: bool) -> tuple[grpc.aio.Server, str]:
    """The A2A service on a started grpc.aio server bound to listen; returns it and its host:port."""
    server = grpc.aio.server(interceptors=[GrpcDoorInterceptor(keys_required)])
    add_A2AServiceServicer_to_server(GrpcHandler(handler, MetadataContextBuilder()), server)
    port = server.add_insecure_port(listen)
    await server.start()
    return server, f"{listen.rpartition(':')[0]}:{port}"
