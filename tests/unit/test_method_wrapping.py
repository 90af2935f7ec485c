"""Handlers registered through WrappedRegistration are served already wrapped (no interceptor per call), through
the generic handler only: registered methods cost grpc.aio CPU on every call (docs/write-path.md)."""

from __future__ import annotations

from typing import Any

import grpc

from taskmem.api.method_wrapping import WrappedRegistration, WrappingInterceptor


class _Tagging(WrappingInterceptor):
    """Wraps the methods of one service by tagging their replies."""

    def wraps(self, method: str) -> bool:
        return method.startswith("/guarded.Service/")

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        inner = handler.unary_unary

        async def unary_unary(request: Any, context: Any) -> Any:
            return ("wrapped", await inner(request, context))

        return grpc.unary_unary_rpc_method_handler(unary_unary)


class _RecordingServer:
    def __init__(self) -> None:
        self.generic: list[grpc.GenericRpcHandler] = []
        self.registered: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self.generic.extend(handlers)

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        self.registered.update({f"/{service}/{name}": handler for name, handler in handlers.items()})


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


async def _echo(request: Any, context: Any) -> Any:
    return request


def _register(server: Any, service: str) -> None:
    """What a generated add_*Servicer_to_server does."""
    handlers = {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


async def test_a_wrapped_service_is_served_wrapped_through_its_generic_handler_only() -> None:
    server, wrapping = _RecordingServer(), _Tagging()
    _register(WrappedRegistration(server, wrapping), "guarded.Service")  # type: ignore[arg-type]
    assert server.registered == {}  # the generated function's registered methods are dropped
    generic = server.generic[0].service(_Details("/guarded.Service/Echo"))
    assert await generic.unary_unary("hi", None) == ("wrapped", "hi")
    assert server.generic[0].service(_Details("/guarded.Service/Echo")) is generic  # wrapped once, then kept


async def test_methods_the_wrapping_leaves_alone_are_served_as_they_are() -> None:
    server = _RecordingServer()
    _register(WrappedRegistration(server, _Tagging()), "other.Service")  # type: ignore[arg-type]
    assert await server.generic[0].service(_Details("/other.Service/Echo")).unary_unary("hi", None) == "hi"
    assert server.generic[0].service(_Details("/other.Service/Missing")) is None
