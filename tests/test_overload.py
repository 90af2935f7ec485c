"""Past capacity the server refuses at once with UNAVAILABLE, ERROR_REASON_OVERLOADED and a retry hint
(never CANCELLED); taskmem_client retries after the pause it asks for and, once refused, holds calls past
its limit of calls in flight.

The client's behaviour is judged against an in-test server that refuses on cue with the real server's own
refusal (taskmem.api.admission), never by counting how many calls a real server refuses: that depends on
how fast the machine is at the moment. The real server's refusal is checked with its one slot held by a
call that waits at a scripted model, so the refusal is certain."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.rpc import error_details_pb2, status_pb2

from taskmem.api.admission import _refusal
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceServicer, TaskServiceStub, add_TaskServiceServicer_to_server
from taskmem_client import RetryPolicy, TaskmemClient
from taskmem_client.calls import _retryable
from tests.support.scripted_llm import ScriptedLLM, scripted_llm
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS



@dataclass
class HeldCall:
    """One PostMessage at the cue server, waiting for the test to answer it."""
    at: float  # time.monotonic() when it reached the server
    answer: asyncio.Future[grpc.Status | None] = field(default_factory=asyncio.Future)

    def succeed(self) -> None:
        self.answer.set_result(None)

    def refuse(self, hint_ms: int) -> None:
        self.answer.set_result(_refusal(hint_ms))  # what the real server sends past capacity


class CueTasks(TaskServiceServicer):
    def __init__(self) -> None:
        self.calls: asyncio.Queue[HeldCall] = asyncio.Queue()  # every call that reached it, in order

    async def PostMessage(self, request: pb.PostMessageRequest,
                          context: grpc.aio.ServicerContext) -> pb.PostMessageResponse:
        call = HeldCall(time.monotonic())
        self.calls.put_nowait(call)
        refusal = await call.answer
        if refusal is not None:
            await context.abort_with_status(refusal)
        return pb.PostMessageResponse()

    async def next(self) -> HeldCall:
        return await asyncio.wait_for(self.calls.get(), HANG_GUARD_SECONDS)

    async def none_sent(self, why: str) -> None:
        """No further call has reached the server. A held call gives no sign that it is held, so this looks
        after a pause: on a busy machine a call sent wrongly may be missed, never a right one failed."""
        await asyncio.sleep(0.1)
        assert self.calls.empty(), f"{self.calls.qsize()} more calls reached the server: {why}"


@dataclass
class CueServer:
    tasks: CueTasks
    address: str


@pytest_asyncio.fixture
async def cue_server() -> AsyncIterator[CueServer]:
    server = grpc.aio.server()
    tasks = CueTasks()
    add_TaskServiceServicer_to_server(tasks, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield CueServer(tasks, f"127.0.0.1:{port}")
    await server.stop(None)


def _post(task_id: str = "task") -> pb.PostMessageRequest:
    return pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content="busy")


async def _refused_once(client: TaskmemClient, server: CueServer) -> None:
    refused = asyncio.ensure_future(client.tasks.PostMessage(_post()))
    (await server.tasks.next()).refuse(300)
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await refused
    assert error.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_after_a_refusal_the_python_client_holds_calls_past_its_limit_and_lets_them_go_as_it_grows(
        cue_server: CueServer) -> None:
    async with TaskmemClient(cue_server.address, retry=RetryPolicy(attempts=1)) as client:
        await _refused_once(client, cue_server)  # the limit halves to its floor: one call in flight
        calls = [asyncio.ensure_future(client.tasks.PostMessage(_post())) for _ in range(4)]
        first = await cue_server.tasks.next()
        await cue_server.tasks.none_sent("with a limit of one call after the refusal, three should wait in the client")
        first.succeed()  # one success grows the limit to two: two held calls go, the last still waits
        second, third = await cue_server.tasks.next(), await cue_server.tasks.next()
        await cue_server.tasks.none_sent("with a limit of two calls, the fourth should wait in the client")
        second.succeed()  # past two: the last goes
        fourth = await cue_server.tasks.next()
        third.succeed()
        fourth.succeed()
        await asyncio.wait_for(asyncio.gather(*calls), HANG_GUARD_SECONDS)


async def test_without_the_limit_the_python_client_sends_every_call_even_after_a_refusal(
        cue_server: CueServer) -> None:
    async with TaskmemClient(cue_server.address, retry=RetryPolicy(attempts=1, limit_calls_in_flight=False)) as client:
        await _refused_once(client, cue_server)
        calls = [asyncio.ensure_future(client.tasks.PostMessage(_post())) for _ in range(4)]
        held = [await cue_server.tasks.next() for _ in range(4)]  # all four at the server at once
        for call in held:
            call.succeed()
        await asyncio.wait_for(asyncio.gather(*calls), HANG_GUARD_SECONDS)


async def test_the_python_client_retries_a_refused_call_after_the_servers_hint(cue_server: CueServer) -> None:
    pauses: list[float] = []
    policy = RetryPolicy(attempts=3, initial_backoff=0.001, max_backoff=0.002,
                         on_retry=lambda error, attempt, pause: pauses.append(pause))
    async with TaskmemClient(cue_server.address, timeout=60, retry=policy) as client:
        call = asyncio.ensure_future(client.tasks.PostMessage(_post()))
        (await cue_server.tasks.next()).refuse(300)
        refused_at = time.monotonic()  # before the client can have read the refusal
        retry = await cue_server.tasks.next()
        retry.succeed()
        await asyncio.wait_for(call, HANG_GUARD_SECONDS)
    assert pauses == [0.3]  # the server's hint, not the client's own 1-2 ms backoff
    assert retry.at - refused_at >= 0.3  # a lower bound only: a busy machine makes the retry later, never sooner


# --- the real server ---------------------------------------------------------------------------------


@pytest.fixture
def held_model() -> Iterator[ScriptedLLM]:
    with scripted_llm() as llm:
        llm.answer = lambda system, user: "Deploy next."
        llm.hold.set()
        yield llm


@pytest.fixture
def busy_server(held_model: ScriptedLLM, tmp_path: Path) -> Iterator[ServerProcess]:
    """A real server with room for one unary call at once, hinting 300 ms, whose model answers only on cue."""
    server = ServerProcess(tmp_path / "taskmem.db", env={
        "TASKMEM_MAX_IN_FLIGHT_CALLS": "1", "TASKMEM_OVERLOAD_RETRY_AFTER_MS": "300",
        "TASKMEM_LLM_BASE_URL": held_model.base_url, "TASKMEM_LLM_MODEL": "scripted", "TASKMEM_LLM_RETRIES": "0"})
    server.start()
    yield server
    held_model.release.set()
    server.stop()


async def _refused_while_a_query_holds_the_slot(address: str, llm: ScriptedLLM) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(address) as channel:
        tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="busy"))).task.id
        query = asyncio.ensure_future(state.QueryTask(spb.QueryTaskRequest(task_id=task_id, question="what next?")))
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while not llm.requests:  # the query is at the model: it holds the server's one slot
            assert time.monotonic() < deadline, "QueryTask did not reach the model"
            await asyncio.sleep(0.01)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await tasks.PostMessage(_post(task_id))
        llm.release.set()
        assert (await asyncio.wait_for(query, HANG_GUARD_SECONDS)).answer == "Deploy next."
    return refused.value


async def test_a_call_past_capacity_is_refused_with_unavailable_overloaded_and_the_retry_hint_never_cancelled(
        busy_server: ServerProcess, held_model: ScriptedLLM) -> None:
    error = await _refused_while_a_query_holds_the_slot(busy_server.address, held_model)
    assert error.code() == grpc.StatusCode.UNAVAILABLE, error
    trailers = dict(error.trailing_metadata() or ())
    assert trailers["grpc-retry-pushback-ms"] == "300"
    details = status_pb2.Status.FromString(trailers["grpc-status-details-bin"]).details
    info, retry = error_details_pb2.ErrorInfo(), error_details_pb2.RetryInfo()
    assert details[0].Unpack(info) and info.reason == "ERROR_REASON_OVERLOADED"
    assert details[1].Unpack(retry) and retry.retry_delay.ToMilliseconds() == 300


async def test_a_refusal_makes_even_a_call_unsafe_to_repeat_retryable_as_nothing_was_done(
        busy_server: ServerProcess, held_model: ScriptedLLM) -> None:
    refused = await _refused_while_a_query_holds_the_slot(busy_server.address, held_model)
    assert _retryable(refused, safe=False)
    unavailable = grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata())
    assert not _retryable(unavailable, safe=False) and _retryable(unavailable, safe=True)
