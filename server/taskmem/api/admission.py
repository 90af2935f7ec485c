"""Admission: past capacity, a call is refused at once with a retry hint instead of waiting in a queue.

Without it, calls that arrive faster than this process serves them queue inside gRPC (its
max_pending_requests backlog), every queued call's latency grows with the queue, and gRPC then
cancels calls it has not started: CANCELLED, which a caller cannot tell from its own cancellation
and no client retries. That queue is in gRPC's C core, out of sight; what shows it is the event
loop falling behind (every call, accepted or queued, is served by this one loop). So a call is
refused when the loop runs more than max_loop_lag_ms late (smoothed over a few samples) while calls
pile up, or when max_in_flight_calls unary calls already run; it is answered at its first step, before any of it is done:

- UNAVAILABLE, the code gRPC clients and this project's clients retry ("try again"); not
  RESOURCE_EXHAUSTED, which this API uses for limits a retry cannot change (message size,
  working memory), so a caller that retries on the code alone does the right thing;
- ErrorInfo reason ERROR_REASON_OVERLOADED (nothing was done: safe to repeat, whatever the RPC);
- the pause to wait, as google.rpc.RetryInfo.retry_delay in the status details and as
  grpc-retry-pushback-ms in the trailers (gRPC's own retry pushback, A6): overload_retry_after_ms,
  doubled for each second the overload has lasted (up to 8 times).

A refusal costs a fraction of a call, so the loop catches up with what arrives, gRPC's queue
stays short and an accepted call waits little before it starts. Streams (subscriptions, tails) are
long-lived and not counted: each is one call, not a rate.
"""

from __future__ import annotations

import asyncio
import time

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from taskmem.api.errors import DOMAIN

RETRY_PUSHBACK_HEADER = "grpc-retry-pushback-ms"


_LAG_SAMPLE_SECONDS = 0.005
_LAG_WEIGHT = 0.25  # of each new sample in the smoothed lag: one descheduling spike does not refuse calls
# A late loop refuses calls only while this many run: a background thread holding the GIL (loading a
# model, a big write) makes the loop late with no backlog of calls, and refusing then helps no one.
_BUSY_IN_FLIGHT = 8
_HINT_STEPS = 4  # the hint doubles for each second an overload lasts, up to 8 x overload_retry_after_ms


class Admission:
    def __init__(self, max_in_flight: int, retry_after_ms: int, max_loop_lag_ms: float) -> None:
        self._max = max_in_flight
        self._max_lag = max_loop_lag_ms / 1000
        self._lag = 0.0  # how late the loop wakes, smoothed, in seconds
        self._in_flight = 0
        self._overloaded_since: float | None = None
        # Built once, refusing must be cheap. A longer overload asks for longer pauses, so the retries of
        # the calls refused early do not all come back into the same overload.
        self._refusals = [_refusal(retry_after_ms << step) for step in range(_HINT_STEPS)]

    async def watch_loop(self) -> None:
        """Samples the event loop's lateness until cancelled. While the loop is behind, the sample that
        measures it is late too, so a high value holds until the loop has caught up."""
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(_LAG_SAMPLE_SECONDS)
            late = loop.time() - before - _LAG_SAMPLE_SECONDS
            self._lag += (late - self._lag) * _LAG_WEIGHT

    def try_enter(self) -> bool:
        """Take a slot if the server has capacity (the caller must leave() once done); False: refuse the
        call with refusal()."""
        if self._in_flight >= self._max or (self._lag > self._max_lag and self._in_flight >= _BUSY_IN_FLIGHT):
            if self._overloaded_since is None:
                self._overloaded_since = time.monotonic()
            return False
        self._overloaded_since = None
        self._in_flight += 1
        return True

    def leave(self) -> None:
        self._in_flight -= 1

    def refusal(self) -> grpc.Status:
        lasted = time.monotonic() - (self._overloaded_since or time.monotonic())
        return self._refusals[min(_HINT_STEPS - 1, int(lasted))]


def _refusal(retry_after_ms: int) -> grpc.Status:
    info, retry = any_pb2.Any(), any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason="ERROR_REASON_OVERLOADED", domain=DOMAIN,
                                          metadata={"limit": "max_in_flight_calls, max_loop_lag_ms"}))
    retry.Pack(error_details_pb2.RetryInfo(retry_delay=duration_pb2.Duration(
        seconds=retry_after_ms // 1000, nanos=retry_after_ms % 1000 * 1_000_000)))
    status = rpc_status.to_status(status_pb2.Status(
        code=grpc.StatusCode.UNAVAILABLE.value[0], details=[info, retry],
        message=f"the server is at capacity and did not start this call; retry in {retry_after_ms} ms"))
    return _Status(status.code, status.details,
                   (*status.trailing_metadata, (RETRY_PUSHBACK_HEADER, str(retry_after_ms))))


class _Status(grpc.Status):
    def __init__(self, code: grpc.StatusCode, details: str, trailing_metadata: tuple[tuple[str, str | bytes], ...]):
        self.code = code
        self.details = details
        self.trailing_metadata = trailing_metadata
