"""What taskmem_client's unary interceptor does around each call (taskmem_client.calls), against a fake
channel: the continuation it calls stands for gRPC, so the wrapping is seen alone."""

from __future__ import annotations

import os
import time
from collections.abc import Awaitable, Callable, Generator
from typing import Any

import grpc
import pytest

from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem_client import RetryPolicy, TaskmemError
from taskmem_client.calls import UnaryCallInterceptor, new_request_id

RECORD = "/taskmem.v1.TaskService/RecordAction"
GET = "/taskmem.v1.TaskService/GetTask"
CLIENT_METADATA = (("authorization", "Bearer key"), ("x-taskmem-namespace", "alpha"))


class _Answered:
    """A finished call: awaiting it gives the response at once."""

    def __init__(self, response: object) -> None:
        self._response = response

    def __await__(self) -> Generator[Any, None, object]:
        return self._response
        yield  # a generator, so awaitable


Continuation = Callable[[grpc.aio.ClientCallDetails, Any], Awaitable[Any]]


def _answering(sent: list[tuple[grpc.aio.ClientCallDetails, Any]] | None = None) -> Continuation:
    async def continuation(details: grpc.aio.ClientCallDetails, request: Any) -> _Answered:
        if sent is not None:
            sent.append((details, request))
        return _Answered(request)
    return continuation


def _failing(code: grpc.StatusCode, sent: list[tuple[grpc.aio.ClientCallDetails, Any]],
             trailers: tuple[tuple[str, str], ...] = ()) -> Continuation:
    async def continuation(details: grpc.aio.ClientCallDetails, request: Any) -> _Answered:
        sent.append((details, request))
        raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailers), "failed")
    return continuation


def _details(method: str, timeout: float | None = None,
             metadata: grpc.aio.Metadata | None = None) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(method.encode(), timeout, metadata or grpc.aio.Metadata(), None, None)


def _record() -> pb.RecordActionRequest:
    return pb.RecordActionRequest(task_id="tsk_x", summary="s" * 900, status=task_pb2.ACTION_STATUS_SUCCEEDED)


async def test_every_call_carries_the_clients_metadata_and_a_calls_own_value_replaces_the_clients() -> None:
    interceptor = UnaryCallInterceptor(CLIENT_METADATA, 30.0, RetryPolicy())
    sent: list[tuple[grpc.aio.ClientCallDetails, Any]] = []
    get = pb.GetTaskRequest(task_id="tsk_x")
    await interceptor.intercept_unary_unary(_answering(sent), _details(GET), get)
    own = grpc.aio.Metadata(("x-taskmem-namespace", "beta"), ("x-trace", "1"))
    await interceptor.intercept_unary_unary(_answering(sent), _details(GET, metadata=own), get)
    await interceptor.intercept_unary_unary(_answering(sent), _details(GET), get)
    first, overridden, again = (list(details.metadata) for details, _ in sent)
    assert first == again == list(CLIENT_METADATA)
    assert sorted(overridden) == [("authorization", "Bearer key"), ("x-taskmem-namespace", "beta"), ("x-trace", "1")]


async def test_the_deadline_is_the_calls_own_timeout_else_the_clients_and_covers_the_wait() -> None:
    interceptor = UnaryCallInterceptor((), 30.0, RetryPolicy())
    sent: list[tuple[grpc.aio.ClientCallDetails, Any]] = []
    get = pb.GetTaskRequest(task_id="tsk_x")
    await interceptor.intercept_unary_unary(_answering(sent), _details(GET), get)
    await interceptor.intercept_unary_unary(_answering(sent), _details(GET, timeout=2.0), get)
    (default, own) = (details.timeout for details, _ in sent)
    assert 29 < default <= 30 and 1 < own <= 2
    sent.clear()
    unlimited = UnaryCallInterceptor((), None, RetryPolicy(attempt_timeout=5.0))
    await unlimited.intercept_unary_unary(_answering(sent), _details(GET), get)
    assert sent[0][0].timeout == 5.0


async def test_failed_attempts_are_repeated_with_one_request_id_after_doubling_pauses_until_attempts_run_out() -> None:
    retried: list[tuple[int, float]] = []
    policy = RetryPolicy(attempts=4, initial_backoff=0.01, max_backoff=0.025,
                         on_retry=lambda error, attempt, pause: retried.append((attempt, pause)))
    interceptor = UnaryCallInterceptor((), 30.0, policy)
    sent: list[tuple[grpc.aio.ClientCallDetails, Any]] = []
    record = _record()
    with pytest.raises(TaskmemError) as raised:
        await interceptor.intercept_unary_unary(_failing(grpc.StatusCode.UNAVAILABLE, sent), _details(RECORD), record)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    ids = {request.request_id for _, request in sent}
    assert len(sent) == 4 and len(ids) == 1 and ids != {""} and record.request_id == ""
    assert [attempt for attempt, _ in retried] == [1, 2, 3]
    first, second, third = (pause for _, pause in retried)
    assert 0.01 <= first <= 0.02 and 0.02 <= second <= 0.025 and third == pytest.approx(0.025)


async def test_a_call_is_not_repeated_on_an_error_a_retry_would_not_mend() -> None:
    retried: list[int] = []
    interceptor = UnaryCallInterceptor((), 30.0, RetryPolicy(on_retry=lambda error, attempt, pause:
                                                             retried.append(attempt)))
    sent: list[tuple[grpc.aio.ClientCallDetails, Any]] = []
    with pytest.raises(TaskmemError) as raised:
        await interceptor.intercept_unary_unary(_failing(grpc.StatusCode.NOT_FOUND, sent), _details(GET),
                                                pb.GetTaskRequest(task_id="tsk_x"))
    assert raised.value.code() == grpc.StatusCode.NOT_FOUND and len(sent) == 1 and retried == []


async def test_a_retry_waits_at_least_the_servers_hint_yet_ends_at_the_deadline() -> None:
    pauses: list[float] = []
    policy = RetryPolicy(attempts=5, initial_backoff=0.001, max_backoff=0.002,
                         on_retry=lambda error, attempt, pause: pauses.append(pause))
    sent: list[tuple[grpc.aio.ClientCallDetails, Any]] = []
    hinting = _failing(grpc.StatusCode.UNAVAILABLE, sent, trailers=(("grpc-retry-pushback-ms", "60"),))
    interceptor = UnaryCallInterceptor((), 0.5, policy)
    started = time.monotonic()
    with pytest.raises(TaskmemError):
        await interceptor.intercept_unary_unary(hinting, _details(GET), pb.GetTaskRequest(task_id="tsk_x"))
    assert len(pauses) == 4 and min(pauses) >= 0.06 and time.monotonic() - started >= 0.24
    sent.clear()
    pauses.clear()
    hinting = _failing(grpc.StatusCode.UNAVAILABLE, sent, trailers=(("grpc-retry-pushback-ms", "5000"),))
    with pytest.raises(TaskmemError) as raised:
        await interceptor.intercept_unary_unary(hinting, _details(GET, timeout=0.2), pb.GetTaskRequest(task_id="t"))
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE
    assert pauses and pauses[0] <= 0.2  # cut to the deadline, not the 5 s the server asked for


def test_request_ids_differ_between_calls_and_in_a_forked_child() -> None:
    minted = [new_request_id() for _ in range(1000)]
    assert len(set(minted)) == 1000 and all(len(minted_id) <= 64 for minted_id in minted)
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # the child mints one id, sends it and leaves without running anything else
        os.write(writing, new_request_id().encode())
        os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    from_child = os.read(reading, 100).decode()
    os.close(reading)
    mine = new_request_id()
    assert from_child and from_child[:24] != mine[:24], (from_child, mine)

