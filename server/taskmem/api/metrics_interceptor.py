"""An interceptor that times every RPC and counts it by method and status code.

It sits outside GuardInterceptor, so refused calls (bad key, malformed request) are counted
too. It also names the running method for log lines (log_format.CALL_METHOD) and logs one
line per finished call at DEBUG with its duration.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from taskmem.api.method_wrapping import WrappingInterceptor
from taskmem.log_format import CALL_DURATION_MS, CALL_METHOD
from taskmem.metrics import Metrics

log = logging.getLogger("taskmem.rpc")


def _code_of(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    if isinstance(error, asyncio.CancelledError):
        return grpc.StatusCode.CANCELLED.name
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):  # grpc.aio may report the numeric value
        return next((c.name for c in grpc.StatusCode if c.value[0] == code), str(code))
    return grpc.StatusCode.OK.name if error is None else grpc.StatusCode.UNKNOWN.name


class MetricsInterceptor(WrappingInterceptor):
    def __init__(self, metrics: Metrics | None) -> None:
        super().__init__()
        self._metrics = metrics
        # Each labelled child once: labels() takes a lock and builds a key on every call.
        self._counters: dict[tuple[str, str], Any] = {}
        self._latencies: dict[str, Any] = {}

    def _finish(self, method: str, context: grpc.aio.ServicerContext, started: float,
                error: BaseException | None) -> None:
        seconds = time.perf_counter() - started
        code = _code_of(context, error)
        if self._metrics is not None:
            counter = self._counters.get((method, code))
            if counter is None:
                counter = self._counters[(method, code)] = self._metrics.rpcs.labels(method, code)
            latency = self._latencies.get(method)
            if latency is None:
                latency = self._latencies[method] = self._metrics.rpc_seconds.labels(method)
            counter.inc()
            latency.observe(seconds)
        if log.isEnabledFor(logging.DEBUG):
            CALL_DURATION_MS.set(round(seconds * 1000, 3))
            log.debug("%s %s", method, code)
            CALL_DURATION_MS.set(None)

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        finish = self._finish
        if handler.unary_unary:
            inner_unary = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                CALL_METHOD.set(method)
                started, error = time.perf_counter(), None
                try:
                    return await inner_unary(request, context)
                except BaseException as raised:
                    error = raised
                    del request  # an abort's exception keeps this frame until a full collection (GuardInterceptor)
                    raise
                finally:
                    finish(method, context, started, error)

            return grpc.unary_unary_rpc_method_handler(
                unary_unary, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        if handler.unary_stream:
            inner_stream = handler.unary_stream

            async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                CALL_METHOD.set(method)
                started, error = time.perf_counter(), None
                try:
                    async for response in inner_stream(request, context):
                        yield response
                except BaseException as raised:
                    error = raised
                    del request  # as above
                    raise
                finally:
                    finish(method, context, started, error)

            return grpc.unary_stream_rpc_method_handler(
                unary_stream, request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer)
        return handler
