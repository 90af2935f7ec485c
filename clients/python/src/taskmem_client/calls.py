"""What every call gets: credentials, a deadline, a request_id, retries, TaskmemError.

Implemented as grpc.aio client interceptors, so the generated stubs stay the API and keep
their .pyi types.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import os
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import Message

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


# request_ids are a random prefix plus a counter: as unique as uuid4 (96 random bits per process, drawn
# again in a forked child) at a tenth of the cost of building a UUID for every call.
_request_ids = itertools.count()
_request_id_prefix = ""


def _new_request_id_prefix() -> None:
    global _request_id_prefix
    _request_id_prefix = os.urandom(12).hex()


_new_request_id_prefix()
os.register_at_fork(after_in_child=_new_request_id_prefix)


def new_request_id() -> str:
    """An id no other call of any process sends: this process's random prefix and a call counter."""
    return f"{_request_id_prefix}{next(_request_ids):012x}"


def with_request_id(request: Message) -> Message:
    """request with a fresh request_id if it has the field and the caller left it empty (a copy)."""
    if "request_id" not in request.DESCRIPTOR.fields_by_name or getattr(request, "request_id"):
        return request
    filled = type(request)()
    filled.CopyFrom(request)
    setattr(filled, "request_id", new_request_id())
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


def backoff(policy: RetryPolicy, attempt: int) -> float:
    """The client's own pause after failed attempt number `attempt` (1, 2, ...): exponential from
    initial_backoff, plus up to initial_backoff of jitter, at most max_backoff."""
    doubled = policy.initial_backoff * 2.0 ** min(attempt - 1, 64)  # the cap on the exponent avoids OverflowError
    return max(0.0, min(doubled + random.uniform(0, policy.initial_backoff), policy.max_backoff))


def pause_before_retry(policy: RetryPolicy, error: grpc.aio.AioRpcError, attempt: int, safe: bool,
                       deadline: float | None) -> float | None:
    """How long to wait before repeating a call whose attempt number `attempt` failed with error, or None
    when it is not repeated: the error is not retryable for this call, the attempts are spent, or the
    deadline (time.monotonic()) has passed. The pause is at least what the server asked for and ends
    no later than the deadline."""
    if not _retryable(error, safe):
        return None
    pause = backoff(policy, attempt)
    asked = retry_delay(error)
    if asked is not None:
        pause = max(pause, asked)
    left = None if deadline is None else deadline - time.monotonic()
    if attempt >= policy.attempts or (left is not None and left <= 0):
        return None
    return pause if left is None else max(0.0, min(pause, left))


def call_interceptors(metadata: Sequence[tuple[str, str]], default_timeout: float | None,
                      retry: RetryPolicy) -> list[grpc.aio.ClientInterceptor]:
    """The channel's interceptors. grpc.aio files each interceptor under one kind only, so the
    unary and the streaming halves are separate objects."""
    return [UnaryCallInterceptor(metadata, default_timeout, retry), StreamCallInterceptor(metadata)]


def _details(details: grpc.aio.ClientCallDetails, timeout: float | None,
             metadata: grpc.aio.Metadata) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(details.method, timeout, metadata, details.credentials, details.wait_for_ready)


class _MetadataMixin:
    _metadata: tuple[tuple[str, str], ...]
    _own_metadata: grpc.aio.Metadata

    def _init_metadata(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._metadata = tuple(metadata)
        # The metadata of every call that brings none of its own, built once: gRPC only reads it.
        self._own_metadata = grpc.aio.Metadata(*self._metadata)

    def _call_metadata(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.Metadata:
        if not details.metadata:
            return self._own_metadata
        metadata = grpc.aio.Metadata(*self._metadata)
        for key, value in details.metadata:
            if key in metadata:
                del metadata[key]  # the call's own value wins over the client's
            metadata.add(key, value)
        return metadata


class UnaryCallInterceptor(_MetadataMixin, grpc.aio.UnaryUnaryClientInterceptor):
    """Adds the metadata, a default deadline, a request_id and retries to unary calls.

    A call that succeeds at once costs a few steps: no retry state is built until an attempt fails."""

    def __init__(self, metadata: Sequence[tuple[str, str]], default_timeout: float | None,
                 retry: RetryPolicy) -> None:
        self._init_metadata(metadata)
        self._default_timeout = default_timeout
        self._retry = retry
        self._limit = CallLimit() if retry.limit_calls_in_flight else None

    async def intercept_unary_unary(self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails,
                                    request: Any) -> Any:
        timeout = client_call_details.timeout if client_call_details.timeout is not None else self._default_timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        request = with_request_id(request)
        metadata = self._call_metadata(client_call_details)
        attempt = 1
        while True:
            try:
                return await self._attempt(continuation, client_call_details, metadata, request, deadline)
            except grpc.aio.AioRpcError as error:
                safe = is_safe_to_retry(client_call_details.method, request)
                pause = pause_before_retry(self._retry, error, attempt, safe, deadline)
                if pause is None:
                    raise TaskmemError.wrap(error) from None
                if self._retry.on_retry is not None:
                    self._retry.on_retry(error, attempt, pause)
            await asyncio.sleep(pause)
            attempt += 1

    async def _attempt(self, continuation: Any, details: grpc.aio.ClientCallDetails, metadata: grpc.aio.Metadata,
                       request: Any, deadline: float | None) -> Any:
        """One attempt, sent once the client's limit of calls in flight allows it; the wait counts in the
        call's deadline, so the attempt's own timeout is taken after it."""
        limit = self._limit
        if limit is None:
            return await self._send(continuation, details, metadata, request, deadline)
        taken_at = limit.try_acquire()
        if taken_at is None:
            try:
                taken_at = await limit.acquire(None if deadline is None else deadline - time.monotonic())
            except TimeoutError:
                raise grpc.aio.AioRpcError(grpc.StatusCode.DEADLINE_EXCEEDED, grpc.aio.Metadata(),
                                           grpc.aio.Metadata(), "deadline exceeded while the client held the "
                                           "call: the server had refused calls as overloaded") from None
        refused = False
        try:
            return await self._send(continuation, details, metadata, request, deadline)
        except grpc.aio.AioRpcError as error:
            refused = _refused_as_overloaded(error)
            raise
        finally:
            limit.release(taken_at, refused)

    async def _send(self, continuation: Any, details: grpc.aio.ClientCallDetails, metadata: grpc.aio.Metadata,
                    request: Any, deadline: float | None) -> Any:
        policy = self._retry
        if policy.on_send is not None:
            policy.on_send()
        timeout = policy.attempt_timeout
        if deadline is not None:
            left = deadline - time.monotonic()
            timeout = left if timeout is None else min(timeout, left)
        return await (await continuation(_details(details, timeout, metadata), request))


class StreamCallInterceptor(_MetadataMixin, grpc.aio.UnaryStreamClientInterceptor):
    """Adds the metadata to server-streaming calls and raises their errors as TaskmemError."""

    def __init__(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._init_metadata(metadata)

    async def intercept_unary_stream(self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails,
                                     request: Any) -> Any:
        # Streams have no default deadline: subscriptions, tails and watches are open-ended.
        call = await continuation(_details(client_call_details, client_call_details.timeout,
                                           self._call_metadata(client_call_details)), request)
        return _raising_taskmem_errors(call)


async def _raising_taskmem_errors(call: AsyncIterator[Any]) -> AsyncIterator[Any]:
    try:
        async for response in call:
            yield response
    except grpc.aio.AioRpcError as error:
        raise TaskmemError.wrap(error) from None
