"""taskmem_client's limit of calls in flight (taskmem_client.overload.CallLimit): unlimited until the
server refuses a call as overloaded, then halved once per round of refusals and grown back by one per
limit's worth of successes; calls past it wait in the client, in order."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from taskmem.v1 import task_service_pb2 as pb
from taskmem_client import RetryPolicy, TaskmemError
from taskmem_client.calls import UnaryCallInterceptor
from taskmem_client.overload import CallLimit
from tests.support.eventually import HANG_GUARD_SECONDS


async def test_calls_are_not_limited_until_the_server_refuses_one() -> None:
    limit = CallLimit(ceiling=1024)
    taken = [await limit.acquire() for _ in range(500)]
    assert len(taken) == 500 and limit.limit == 1024


async def test_a_refusal_halves_the_calls_in_flight_once_per_round_of_calls_sent_under_the_limit() -> None:
    limit = CallLimit()
    taken = [await limit.acquire() for _ in range(40)]
    for taken_at in taken[:10]:  # ten refusals of calls sent before the first decrease: one round
        limit.release(taken_at, overloaded=True)
    assert limit.limit == 20  # (39 in flight + the refused one) / 2
    for taken_at in taken[10:]:
        limit.release(taken_at, overloaded=False)
    again = [await limit.acquire() for _ in range(20)]
    limit.release(again[0], overloaded=True)  # sent under the new limit: a new round
    assert limit.limit == 10


async def test_calls_past_the_limit_wait_in_order_and_leave_as_calls_finish() -> None:
    limit = CallLimit()
    first, second = await limit.acquire(), await limit.acquire()
    limit.release(first, overloaded=True)  # limit 1, one call in flight
    order: list[int] = []

    async def call(number: int) -> None:
        taken_at = await limit.acquire()
        order.append(number)
        limit.release(taken_at, overloaded=False)

    waiting = [asyncio.ensure_future(call(number)) for number in range(3)]
    await asyncio.sleep(0.01)
    assert order == []  # held while the one slot is taken
    limit.release(second, overloaded=False)
    await asyncio.gather(*waiting)
    assert order == [0, 1, 2]


async def test_successes_grow_the_limit_back_by_one_per_limits_worth() -> None:
    limit = CallLimit()
    limit.release(await limit.acquire(), overloaded=True)
    assert limit.limit == 1
    for _ in range(2):
        limit.release(await limit.acquire(), overloaded=False)
    assert limit.limit == 2


async def test_a_call_cancelled_while_it_waits_leaves_no_slot_taken() -> None:
    limit = CallLimit()
    held = await limit.acquire()
    limit.release(await limit.acquire(), overloaded=True)  # limit 1, one call in flight
    waiter = asyncio.ensure_future(limit.acquire())
    await asyncio.sleep(0)
    waiter.cancel()
    limit.release(held, overloaded=False)  # passes over the cancelled waiter before it runs again
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert limit.try_acquire() is not None


async def test_a_call_that_waits_past_its_timeout_raises_timeout_and_leaves_no_slot_taken() -> None:
    limit = CallLimit()
    held = await limit.acquire()
    limit.release(await limit.acquire(), overloaded=True)  # limit 1, one call in flight
    with pytest.raises(TimeoutError):
        await limit.acquire(timeout=0.02)
    limit.release(held, overloaded=False)
    assert limit.try_acquire() is not None


async def test_a_waiting_call_is_handed_a_slot_before_its_timeout_when_a_call_finishes() -> None:
    limit = CallLimit()
    held = await limit.acquire()
    limit.release(await limit.acquire(), overloaded=True)  # limit 1, one call in flight
    waiter = asyncio.ensure_future(limit.acquire(timeout=5.0))
    await asyncio.sleep(0.01)
    limit.release(held, overloaded=False)
    taken_at = await asyncio.wait_for(waiter, HANG_GUARD_SECONDS)  # a hang guard: the slot is handed over at once
    limit.release(taken_at, overloaded=False)
    assert limit.try_acquire() is not None


async def test_a_call_held_by_the_client_past_its_deadline_fails_deadline_exceeded_without_being_sent() -> None:
    interceptor = UnaryCallInterceptor((), None, RetryPolicy(attempts=1))
    limit = interceptor._limit
    assert limit is not None
    held = await limit.acquire()
    limit.release(await limit.acquire(), overloaded=True)  # limit 1, its one slot taken
    sent: list[object] = []

    async def continuation(details: grpc.aio.ClientCallDetails, request: object) -> object:
        sent.append(request)
        raise AssertionError("a held call was sent")

    details = grpc.aio.ClientCallDetails("/taskmem.v1.TaskService/GetTask", 0.05, None, None, None)
    with pytest.raises(TaskmemError) as raised:
        await interceptor.intercept_unary_unary(continuation, details, pb.GetTaskRequest(task_id="t"))
    assert raised.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED and sent == []
    limit.release(held, overloaded=False)
    assert limit.try_acquire() is not None  # the held call left no slot taken
