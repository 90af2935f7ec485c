"""The event tail: every replica publishes every committed event, its own and the others', in cursor order.

The tail reads the events table past the last cursor it published, in cursor order,
whenever something may have committed: this process's writer says so after each
commit, other replicas' NOTIFY says so through a LISTEN connection, and a periodic
read covers a lost connection. Because cursors become visible in commit order
(store/postgres/commit.py), reading `cursor > last ORDER BY cursor` never skips an
event that commits later, so the event log's subscriptions get each event once, in
order, with no gap, whichever replica wrote it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import psycopg

from taskmem.core.events import Event
from taskmem.core.ids import now_us
from taskmem.store.event_log import event_from_row
from taskmem.store.postgres.commit import CHANNEL
from taskmem.store.access import Reader

log = logging.getLogger(__name__)

PAGE = 1000
# How often the tail reads even when nothing woke it (a NOTIFY lost with its connection).
POLL_SECONDS = 1.0
RECONNECT_SECONDS = 1.0
CLOSE_SECONDS = 2.0


def events_after(db: Reader, after: int, limit: int) -> list[Event]:
    rows = db.fetchall("SELECT * FROM events WHERE cursor > ? ORDER BY cursor LIMIT ?", (after, limit))
    now = now_us()
    return [event_from_row(row, now) for row in rows]


def last_cursor(db: Reader) -> int:
    row = db.fetchone("SELECT last FROM event_cursor WHERE id = 1")
    return int(row[0]) if row else 0


class EventTail:
    def __init__(self, url: str, read: Callable[..., Awaitable[Any]], publish: Callable[[list[Event]], None]) -> None:
        self._url = url
        self._read = read
        self._publish = publish
        self._wake = asyncio.Event()
        # Set (and replaced) after each page is published: what reach() waits on.
        self._advanced = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.last = 0

    async def start(self) -> None:
        """Start from the log's end: earlier events are history, which subscriptions replay themselves."""
        self.last = await self._read(last_cursor)
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
                    page: list[Event] = await self._read(events_after, self.last, PAGE)
                    if page:
                        self.last = page[-1].cursor
                        self._publish(page)
                        self._advanced.set()
                        self._advanced = asyncio.Event()
                    if len(page) < PAGE:
                        break
            except psycopg.Error:
                log.exception("reading the event log failed; retrying")

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
