"""What every call gets: credentials, a deadline, a request_id, retries, TaskmemError.

Implemented as grpc.aio client interceptors, so the generated stubs stay the API and keep
their .pyi types.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import Message
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from taskmem_client.errors import TaskmemError, error_info, retry_delay
from taskmem_client.overload import CallLimit

RETRYABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
# An overloaded server refused the call before doing any of it: any RPC may be repeated.
NOT_STARTED_REASON = "ERROR_REASON_OVERLOADED"

# What the contract says may be repeated without a request_id: reads (NO_SIDE_EFFECTS) and calls whose
# repetition leaves the same state (IDEMPOTENT), as each RPC's idempotency_level option declares.
SAFE_IDEMPOTENCY_LEVELS = frozenset({descriptor_pb2.MethodOptions.NO_SIDE_EFFECTS,
                                     descriptor_pb2.MethodOptions.IDEMPOTENT})


@dataclass(frozen=True)
class RetryPolicy:
    """How unary calls are retried on UNAVAILABLE and DEADLINE_EXCEEDED.

    Only calls that are safe to repeat are retried: those whose request has a request_id
    (the client fills an empty one, so every attempt carries the same id and the server
    returns the first result instead of writing again), those whose RPC the contract
    marks `idempotency_level = NO_SIDE_EFFECTS` (reads) or IDEMPOTENT, and any call an
    overloaded server refused before starting it (ERROR_REASON_OVERLOADED). When the server
    asks for a pause (grpc-retry-pushback-ms, or google.rpc.RetryInfo), the next attempt
    waits at least that long. The call's deadline covers all its attempts.
    """

    attempts: int = 8
    initial_backoff: float = 0.1
    max_backoff: float = 2.0
    # Deadline of one attempt in seconds (None: whatever remains of the call's deadline).
    # Set it to retry an attempt that hangs, for example on a half-open connection.
    attempt_timeout: float | None = None
    # Told (error, attempt number, seconds until the next attempt) before each retry.
    on_retry: Callable[[grpc.aio.AioRpcError, int, float], None] | None = None
    # Keep fewer calls at the server at once after it refuses one as overloaded, and hold the rest in
    # the client until calls finish (taskmem_client.overload.CallLimit); False sends every call at once.
    limit_calls_in_flight: bool = True
    # Told as each attempt is sent: after any pause before it and after it waited for a slot under the
    # client's limit of calls in flight (taskmem_client.overload), in the call's own task.
    on_send: Callable[[], None] | None = None


NO_RETRY = RetryPolicy(attempts=1)


@functools.cache
def idempotency_level(method: str | bytes) -> int:
    """The idempotency_level option of "/taskmem.v1.TaskService/GetTask", read from the generated
    descriptors; IDEMPOTENCY_UNKNOWN for a method they do not hold."""
    text = method.decode() if isinstance(method, bytes) else method
    try:
        found = descriptor_pool.Default().FindMethodByName(text.lstrip("/").replace("/", "."))
    except KeyError:
        return descriptor_pb2.MethodOptions.IDEMPOTENCY_UNKNOWN
    return found.GetOptions().idempotency_level


def is_safe_to_retry(method: str | bytes, request: Message) -> bool:
    """A request with a request_id (the server returns the first result), or an RPC the contract
    marks NO_SIDE_EFFECTS or IDEMPOTENT."""
    if "request_id" in request.DESCRIPTOR.fields_by_name:
        return True
    return idempotency_level(method) in SAFE_IDEMPOTENCY_LEVELS


def with_request_id(request: Message) -> Message:
    """request with a fresh request_id if it has the field and the caller left it empty (a copy)."""
    if "request_id" not in request.DESCRIPTOR.fields_by_name or getattr(request, "request_id"):
        return request
    filled = type(request)()
    filled.CopyFrom(request)
    setattr(filled, "request_id", uuid.uuid4().hex)
    return filled


def _refused_as_overloaded(error: BaseException) -> bool:
    if not isinstance(error, grpc.aio.AioRpcError) or error.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    info = error_info(error)
    return info is not None and info.reason == NOT_STARTED_REASON


def _retryable(error: BaseException, safe: bool) -> bool:
    if not isinstance(error, grpc.aio.AioRpcError) or error.code() not in RETRYABLE_CODES:
        return False
    return safe or _refused_as_overloaded(error)


def call_interceptors(metadata: Sequence[tuple[str, str]], default_timeout: float | None,
                      retry: RetryPolicy) -> list[grpc.aio.ClientInterceptor]:
    """The channel's interceptors. grpc.aio files each interceptor under one kind only, so the
    unary and the streaming halves are separate objects."""
    return [UnaryCallInterceptor(metadata, default_timeout, retry), StreamCallInterceptor(metadata)]


class _MetadataMixin:
    _metadata: tuple[tuple[str, str], ...]

    def _details(self, details: grpc.aio.ClientCallDetails, timeout: float | None) -> grpc.aio.ClientCallDetails:
        metadata = grpc.aio.Metadata(*self._metadata)
        for key, value in details.metadata or ():
            if key in metadata:
                del metadata[key]  # the call's own value wins over the client's
            metadata.add(key, value)
        return grpc.aio.ClientCallDetails(details.method, timeout, metadata, details.credentials,
                                          details.wait_for_ready)


class UnaryCallInterceptor(_MetadataMixin, grpc.aio.UnaryUnaryClientInterceptor):
    """Adds the metadata, a default deadline, a request_id and retries to unary calls."""

    def __init__(self, metadata: Sequence[tuple[str, str]], default_timeout: float | None,
                 retry: RetryPolicy) -> None:
        self._metadata = tuple(metadata)
        self._default_timeout = default_timeout
        self._retry = retry
        self._limit = CallLimit() if retry.limit_calls_in_flight else None

    async def intercept_unary_unary(self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails,
                                    request: Any) -> Any:
        timeout = client_call_details.timeout if client_call_details.timeout is not None else self._default_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        request = with_request_id(request)
        policy = self._retry
        safe = is_safe_to_retry(client_call_details.method, request)

        def remaining() -> float | None:
            return None if deadline is None else deadline - time.monotonic()

        backoff = wait_exponential_jitter(multiplier=policy.initial_backoff, jitter=policy.initial_backoff,
                                          max=policy.max_backoff)

        def wait(state: RetryCallState) -> float:
            pause = backoff(state)
            error = state.outcome.exception() if state.outcome is not None else None
            asked = retry_delay(error) if isinstance(error, grpc.aio.AioRpcError) else None
            if asked is not None:
                pause = max(pause, asked)
            left = remaining()
            return pause if left is None else max(0.0, min(pause, left))

        def attempt_timeout() -> float | None:
            left = remaining()
            if left is None:
                return policy.attempt_timeout
            return left if policy.attempt_timeout is None else min(policy.attempt_timeout, left)

        def stop(state: RetryCallState) -> bool:
            left = remaining()
            return stop_after_attempt(policy.attempts)(state) or (left is not None and left <= 0)

        def before_sleep(state: RetryCallState) -> None:
            error = state.outcome.exception() if state.outcome is not None else None
            if policy.on_retry is not None and isinstance(error, grpc.aio.AioRpcError):
                sleep = state.next_action.sleep if state.next_action is not None else 0.0
                policy.on_retry(error, state.attempt_number, sleep)

        try:
            async for attempt in AsyncRetrying(retry=retry_if_exception(lambda error: _retryable(error, safe)),
                                               stop=stop, wait=wait, before_sleep=before_sleep, reraise=True):
                with attempt:
                    return await self._attempt(continuation, request, remaining(), lambda: self._details(
                        client_call_details, attempt_timeout()))
        except grpc.aio.AioRpcError as error:
            raise TaskmemError.wrap(error) from None
        raise AssertionError("unreachable: tenacity either returns or raises")

    async def _attempt(self, continuation: Any, request: Any, timeout: float | None,
                       details: Callable[[], grpc.aio.ClientCallDetails]) -> Any:
        """One attempt, sent once the client's limit of calls in flight allows it; the wait counts in the
        call's deadline (timeout: what remains of it), so the attempt's details are made after it."""
        limit = self._limit
        if limit is None:
            return await self._send(continuation, request, details)
        taken_at = limit.try_acquire()
        try:
            if taken_at is None:
                taken_at = await asyncio.wait_for(limit.acquire(), timeout)
        except TimeoutError:
            raise grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(), grpc.aio.Metadata(),
                                       "deadline exceeded while the client held the call: the server had "
                                       "refused calls as overloaded") from None
        refused = False
        try:
            return await self._send(continuation, request, details)
        except grpc.aio.AioRpcError as error:
            refused = _refused_as_overloaded(error)
            raise
        finally:
            limit.release(taken_at, refused)

    async def _send(self, continuation: Any, request: Any, details: Callable[[], grpc.aio.ClientCallDetails]) -> Any:
        if self._retry.on_send is not None:
            self._retry.on_send()
        return await (await continuation(details(), request))


class StreamCallInterceptor(_MetadataMixin, grpc.aio.UnaryStreamClientInterceptor):
    """Adds the metadata to server-streaming calls and raises their errors as TaskmemError."""

    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._metadata = tuple(metadata)

    async def intercept_unary_stream(self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails,
                                     request: Any) -> Any:
        # Streams have no default deadline: subscriptions, tails and watches are open-ended.
        call = await continuation(self._details(client_call_details, client_call_details.timeout), request)
        return _raising_taskmem_errors(call)


async def _raising_taskmem_errors(call: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        async for response in call:
            yield response
    except grpc.aio.AioRpcError as error:
        raise TaskmemError.wrap(error) from None
