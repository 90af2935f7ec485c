"""How many unary calls one client keeps at the server at once, learned from the server's refusals.

A server past capacity refuses a call (UNAVAILABLE, ERROR_REASON_OVERLOADED), but a refusal still costs
it part of a call, and a call only reaches the code that refuses it after waiting in gRPC's queue of
calls not yet started. A client that keeps sending every call, refused or not, keeps that queue full:
far past capacity, the calls the server accepts waited seconds in it first (docs/write-path.md,
"Overload"). So each client limits its own calls in flight, as TCP limits the bytes in flight: the
limit halves when the server refuses a call sent under the current limit, and grows by one for
each limit's worth of calls that succeed (additive increase, multiplicative decrease). Calls past
the limit wait in the client, in order, and are sent as calls finish; the server's queue stays
short and an accepted call waits little there.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque


class CallLimit:
    """Calls in flight at once: unlimited until the server first refuses one as overloaded."""

    def __init__(self, ceiling: int = 1024, floor: int = 1) -> None:
        self._ceiling = ceiling
        self._floor = floor
        self._limit = float(ceiling)
        self._in_flight = 0
        self._waiting: deque[asyncio.Future[None]] = deque()
        self._decreased_at = 0.0

    @property
    def limit(self) -> int:
        return int(self._limit)

    def try_acquire(self) -> float | None:
        """Takes a slot if one is free and no call waits for one: the time it was taken, for release()."""
        if self._in_flight < self._limit and not self._waiting:
            self._in_flight += 1
            return time.monotonic()
        return None

    async def acquire(self, timeout: float | None = None) -> float:
        """Waits for a slot (in arrival order), at most timeout seconds (then TimeoutError); the time it was
        taken, for release(). The wait is one future and, with a timeout, one timer: no task of its own."""
        taken_at = self.try_acquire()
        if taken_at is not None:
            return taken_at
        loop = asyncio.get_running_loop()
        slot = loop.create_future()
        self._waiting.append(slot)
        expiry = None if timeout is None else loop.call_later(max(0.0, timeout), _expire, slot)
        try:
            await slot
        except asyncio.CancelledError:
            if slot.done() and not slot.cancelled():
                self._in_flight -= 1  # handed a slot as it was cancelled: give it back
                self._wake()
            else:
                self._forget(slot)
            raise
        except TimeoutError:
            self._forget(slot)
            raise
        finally:
            if expiry is not None:
                expiry.cancel()
        return time.monotonic()

    def release(self, taken_at: float, overloaded: bool) -> None:
        """Gives the slot back; overloaded: the server refused the call sent in it as past capacity."""
        self._in_flight -= 1
        if overloaded:
            # Once per round: the calls sent before the last decrease were sent under the old limit.
            if taken_at >= self._decreased_at:
                self._limit = max(self._floor, min(self._limit, self._in_flight + 1) / 2)
                self._decreased_at = time.monotonic()
        else:
            self._limit = min(self._ceiling, self._limit + 1 / self._limit)
        self._wake()

    def _forget(self, slot: asyncio.Future[None]) -> None:
        """Takes a slot that was never handed out of the queue, unless _wake already passed it over."""
        try:
            self._waiting.remove(slot)
        except ValueError:
            pass

    def _wake(self) -> None:
        while self._waiting and self._in_flight < self._limit:
            slot = self._waiting.popleft()
            if not slot.done():
                self._in_flight += 1
                slot.set_result(None)


def _expire(slot: asyncio.Future[None]) -> None:
    if not slot.done():
        slot.set_exception(TimeoutError())
