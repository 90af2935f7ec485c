"""TaskService.SubscribeEvents as an async iterator that resumes after the last delivered cursor."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable, Iterable, Sequence

import grpc

from taskmem.v1 import event_pb2, task_service_pb2, task_service_pb2_grpc
from taskmem_client.errors import TaskmemError

# A broken stream is resumed on these codes, the set SubscribeEvents' comment in task_service.proto
# documents for every client: the server shut down or restarted (UNAVAILABLE),
# dropped a slow subscriber (RESOURCE_EXHAUSTED), the stream was reset (INTERNAL) or aborted
# (ABORTED), or cancelled by something other than this client (CANCELLED, for example a GOAWAY;
# this client's own cancellation arrives as asyncio.CancelledError instead).
RESUMABLE_CODES = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED,
                             grpc.StatusCode.INTERNAL, grpc.StatusCode.ABORTED, grpc.StatusCode.CANCELLED})


async def subscribe_events(
    tasks: task_service_pb2_grpc.TaskServiceAsyncStub,
    *,
    task_ids: Iterable[str] = (),
    types: Sequence[event_pb2.EventType.ValueType] = (),
    after_cursor: int = 0,
    initial_backoff: float = 0.1,
    max_backoff: float = 5.0,
    on_reconnect: Callable[[TaskmemError | None, float, int], None] | None = None,
    closed: Callable[[], bool] = lambda: False,
    metadata: Sequence[tuple[str, str]] = (),
) -> AsyncIterator[event_pb2.Event]:
    """Yields each matching event once, in cursor order, across broken streams and server restarts.

    after_cursor 0 replays everything, -1 starts live, n resumes after event n. When the stream
    breaks with a code in RESUMABLE_CODES (or ends cleanly: a subscription has no end) it
    resubscribes after the cursor of the last event yielded, waiting a jittered, doubling delay
    (initial_backoff up to max_backoff, back to initial once an event arrives). Other errors
    (INVALID_ARGUMENT, UNAUTHENTICATED, ...) are raised as TaskmemError. Leaving the loop
    (break, or cancelling the task) ends the call; closing the client ends the loop quietly.

    With after_cursor -1, events committed while the stream is down before its first event are
    not replayed: there is no cursor to resume from yet.
    """
    ids = list(task_ids)
    cursor = after_cursor
    delay = initial_backoff
    attempt = 0
    while not closed():
        call = tasks.SubscribeEvents(task_service_pb2.SubscribeEventsRequest(
            task_ids=ids, types=types, after_cursor=cursor), timeout=None, metadata=tuple(metadata))
        failure: TaskmemError | None = None
        try:
            async for response in call:
                event = response.event
                if not response.HasField("event") or event.cursor <= cursor:
                    continue  # never deliver an event twice, whatever the server sends
                cursor = event.cursor
                delay, attempt = initial_backoff, 0
                yield event
        except asyncio.CancelledError:
            # Closing the channel cancels its calls; only then does this end quietly. A
            # cancellation of the consumer's own task is passed on.
            task = asyncio.current_task()
            if closed() and task is not None and task.cancelling() == 0:
                return
            raise
        except grpc.aio.AioRpcError as error:
            if closed():
                return
            failure = TaskmemError.wrap(error)
            if failure.code() not in RESUMABLE_CODES:
                raise failure from None
        finally:
            call.cancel()
        if closed():
            return
        attempt += 1
        pause = delay / 2 + random.random() * delay / 2  # jitter, so many clients do not reconnect in step
        if on_reconnect is not None:
            on_reconnect(failure, pause, attempt)
        await asyncio.sleep(pause)
        delay = min(delay * 2, max_backoff)
