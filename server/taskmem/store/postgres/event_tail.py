"""The event tail: every replica publishes every committed event, its own and the others', in cursor order.

The tail reads the events table past the last cursor it published, in cursor order,
whenever something may have committed: this process's writer says so after each
commit, other replicas' NOTIFY says so through a LISTEN connection, and a periodic
read covers a lost connection. Because cursors become visible in commit order
(store/postgres/commit.py), reading `cursor > last ORDER BY cursor` never skips an
event that commits later, so the event log's subscriptions get each event once, in
order, with no gap, whichever replica wrote it.

The tail reads on an async connection of its own (autocommit: each read one statement, which sees every
commit before it), on the event loop: a wake-up turns into one round trip to the database, where a read
through the reader threads queued behind the replica's other reads for a thread and a pooled connection
and took three (BEGIN, the SELECT, COMMIT). Cross-replica delivery is then bounded by the write itself
(the writing replica's commit) and the subscriber's stream, not by the tail (bench/replicas_bench.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

import psycopg

from taskmem.core.events import Event
from taskmem.core.ids import now_us
from taskmem.store.event_log import event_from_row
from taskmem.store.postgres.commit import CHANNEL
from taskmem.store.postgres.connection import Row, row_maker

log = logging.getLogger(__name__)

PAGE = 1000
# How often the tail reads even when nothing woke it (a NOTIFY lost with its connection).
POLL_SECONDS = 1.0
RECONNECT_SECONDS = 1.0
CLOSE_SECONDS = 2.0


_EVENTS_AFTER = "SELECT * FROM events WHERE cursor > %s ORDER BY cursor LIMIT %s"
_LAST_CURSOR = "SELECT last FROM event_cursor WHERE id = 1"


class EventTail:
    def __init__(self, url: str, publish: Callable[[list[Event]], None]) -> None:
        self._url = url
        self._connection: psycopg.AsyncConnection[Row] | None = None
        self._publish = publish
        self._wake = asyncio.Event()
        # Set (and replaced) after each page is published: what reach() waits on.
        self._advanced = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.last = 0

    async def start(self) -> None:
        """Start from the log's end: earlier events are history, which subscriptions replay themselves."""
        row = await (await (await self._connected()).execute(_LAST_CURSOR)).fetchone()
        self.last = int(row[0]) if row else 0
        self._tasks = [asyncio.create_task(self._follow(), name="taskmem-event-tail"),
                       asyncio.create_task(self._listen(), name="taskmem-event-listen")]

    def wake(self) -> None:
        """Something may have committed: read past the last cursor soon."""
        self._wake.set()

    async def reach(self, cursor: int, timeout: float) -> bool:
        """Wait until every event up to cursor has been published here; False if that took over timeout seconds."""
        deadline = asyncio.get_running_loop().time() + timeout
        while self.last < cursor:
            advanced = self._advanced
            self.wake()
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                return False
            try:
                async with asyncio.timeout(remaining):
                    await advanced.wait()
            except TimeoutError:
                return False
        return True

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        # A task parked in psycopg's notifies() was seen to outlive its cancellation: wait a bounded time.
        _, stuck = await asyncio.wait(self._tasks, timeout=CLOSE_SECONDS)
        if stuck:
            log.warning("event tail: %d tasks did not stop within %s s", len(stuck), CLOSE_SECONDS)
        if self._connection is not None:
            await self._connection.close()

    async def _follow(self) -> None:
        while True:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation that arrives as the
            # wake-up is set (often, under writes), and the tail then outlived close() and its executor.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await self._wake.wait()
            self._wake.clear()
            try:
                while True:
                    page = await self._events_after(self.last)
                    if page:
                        self.last = page[-1].cursor
                        self._publish(page)
                        self._advanced.set()
                        self._advanced = asyncio.Event()
                    if len(page) < PAGE:
                        break
            except psycopg.Error:
                log.exception("reading the event log failed; retrying")

    async def _connected(self) -> psycopg.AsyncConnection[Row]:
        """The tail's reading connection, opened again when the server dropped it."""
        if self._connection is None or self._connection.closed or self._connection.broken:
            self._connection = await psycopg.AsyncConnection.connect(self._url, autocommit=True,
                                                                     row_factory=row_maker)  # type: ignore[arg-type]
        return self._connection

    async def _events_after(self, after: int) -> list[Event]:
        rows = await (await (await self._connected()).execute(_EVENTS_AFTER, (after, PAGE))).fetchall()
        now = now_us()  # an expired item's event reads as its tombstone from that instant
        return [event_from_row(row, now) for row in rows]

    async def _listen(self) -> None:
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(self._url, autocommit=True) as connection:
                    await connection.execute(f"LISTEN {CHANNEL}")
                    self.wake()  # whatever committed while this connection was down
                    async for _ in connection.notifies():
                        self._wake.set()
            except psycopg.Error as error:
                log.warning("event wake-up connection lost (%s); reconnecting", error)
            await asyncio.sleep(RECONNECT_SECONDS)
