"""A server interceptor that wraps each method's handler once and reuses the wrapper."""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable

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
        if handler is None or not self.wraps(details.method):
            return handler
        wrapped = self._wrapped[details.method] = self.wrap(details.method, handler)
        return wrapped
