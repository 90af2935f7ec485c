"""A server interceptor that wraps each method's handler once and reuses the wrapper; or, cheaper, the same
wrapping applied when the handlers are registered (WrappedRegistration)."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Sequence

import grpc


class WrappingInterceptor(grpc.aio.ServerInterceptor, abc.ABC):
    """Handlers are fixed per method, so each is wrapped once, on its first call, and kept."""

    def __init__(self) -> None:
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    def wraps(self, method: str) -> bool:
        """Whether this interceptor wraps the method at all (the others pass through untouched)."""
        return True

    @abc.abstractmethod
    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """The handler to serve the method with in place of handler."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        wrapped = self._wrapped.get(details.method)
        if wrapped is not None:
            return wrapped
        handler = await continuation(details)
        return None if handler is None else self.wrapped(details.method, handler)

    def wrapped(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """handler as this interceptor serves it (wrapped once and kept, or as it is if not wrapped)."""
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            wrapped = self._wrapped[method] = self.wrap(method, handler) if self.wraps(method) else handler
        return wrapped


class _WrappedGeneric(grpc.GenericRpcHandler):
    def __init__(self, inner: grpc.GenericRpcHandler, wrapping: WrappingInterceptor) -> None:
        self._inner = inner
        self._wrapping = wrapping

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(details)
        return None if handler is None else self._wrapping.wrapped(details.method, handler)


class WrappedRegistration:
    """Stands in for the server in the generated add_*Servicer_to_server functions and registers every
    method's handler already wrapped by `wrapping`. An interceptor given to grpc.aio.server instead is
    awaited on every call just to find the handler (a coroutine and a continuation per call, on the one
    thread that serves every call); registered this way the wrapping costs nothing until the handler runs.

    Each generated function registers its service twice, as a generic handler and as registered methods;
    only the generic handler is kept: a bare grpc.aio server with 65 methods registered (as many as this
    server has) spent ≈ 90 µs more CPU on each call than with one, the same 65 as a generic handler about half
    that (docs/write-path.md, "A second look"); the generic handler finds a method by a dict lookup."""

    def __init__(self, server: grpc.aio.Server, wrapping: WrappingInterceptor) -> None:
        self._server = server
        self._wrapping = wrapping

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers([_WrappedGeneric(handler, self._wrapping) for handler in handlers])

    def add_registered_method_handlers(self, service: str, handlers: dict[str, grpc.RpcMethodHandler]) -> None:
        """Nothing: the generic handler the same generated function adds serves these methods."""
