"""The event log: stored events, and live subscriptions that replay then follow with no gap.

A subscription registers for live events before it reads history, so an event
committed while it replays is seen either in the database or in its live queue
(or both: duplicates are dropped by cursor). When a subscriber falls more than
`queue_size` events behind, its queue is dropped and it catches up from the
database instead, so a slow reader costs disk reads, never unbounded memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Iterator, Sequence
from typing import Any

from taskmem.core.events import Event, EventFilter, EventType, tombstone
from taskmem.core.ids import now_us
from taskmem.store.access import Reader, Row

ReadFunction = Callable[..., Awaitable[Any]]

REPLAY_PAGE = 500


class EventLogClosed(Exception):
    """The server is shutting down; subscribers should resume elsewhere or later."""


class _Subscription:
    def __init__(self, event_filter: EventFilter, queue_size: int) -> None:
        self.filter = event_filter
        self.queue: asyncio.Queue[Event | None] = asyncio.Queue()
        self.queue_size = queue_size
        self.overflowed = False
        self.closed = False

    def offer(self, event: Event) -> None:
        if self.overflowed:
            return
        if self.queue.qsize() >= self.queue_size:
            self.overflowed = True
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(None)  # wake the reader so it catches up from the database
            return
        self.queue.put_nowait(event)

    async def wait(self) -> None:
        """Wait for the next matching change (or an overflow); raises EventLogClosed on shutdown."""
        if await self.queue.get() is None and self.closed:
            raise EventLogClosed("the server is shutting down")
        while not self.queue.empty():
            self.queue.get_nowait()
        self.overflowed = False


# The stored form of an event's payload: compact JSON. One encoder for every write: json.dumps with any
# non-default option builds a new encoder per call, a third of the cost of encoding a 1 KB payload.
payload_text = json.JSONEncoder(separators=(",", ":")).encode


def event_from_row(row: Row, now: int) -> Event:
    """The stored event; a tombstone (core.events.tombstone) once what it carried has expired by `now`,
    whether or not maintenance has stripped the stored payload yet."""
    payload = json.loads(row["payload"])
    expired = row["expires_at"] is not None and row["expires_at"] <= now
    return Event(row["namespace"], EventType(row["type"]), row["task_id"], row["correlation_id"],
                 tombstone(payload) if expired else payload, row["created_at"], row["cursor"], row["expires_at"],
                 expired, row["key_id"], row["agent_id"])


def item_events(db: Reader, namespace: str, event_type: EventType, times: Sequence[int], ids: Collection[str],
                live_at: int | None = None) -> list[tuple[int, int, str]]:
    """(cursor, created_at, item id) of the stored events of `event_type` that carried these items, found by
    the items' times (an item's created_at is its event's) and then by the id in each payload; live_at:
    only those not expired by then. The type is written into the SQL, so the partial index each such
    lookup has (its WHERE names the type) can serve it."""
    if not times:
        return []
    live = " AND (expires_at IS NULL OR expires_at > ?)" if live_at is not None else ""
    rows = db.fetchall(
        f"SELECT cursor, created_at, payload FROM events WHERE namespace = ?"
        f" AND created_at IN ({', '.join('?' * len(times))}) AND type = '{event_type.value}'{live} ORDER BY cursor",
        [namespace, *times, *([live_at] if live_at is not None else [])])
    wanted = set(ids)
    found = [(int(row[0]), int(row[1]), json.loads(row[2]).get("id")) for row in rows]
    return [(cursor, created_at, item) for cursor, created_at, item in found if item in wanted]


def last_cursor(db: Reader, namespace: str) -> int:
    row = db.fetchone("SELECT coalesce(max(cursor), 0) AS c FROM events WHERE namespace = ?", (namespace,))
    return int(row["c"]) if row else 0


def retention_cursor(db: Reader, namespace: str) -> tuple[int, int]:
    """(cursor, when recorded): every event of the namespace up to the cursor is deleted or being deleted by
    the event log's TTL (store/expired_items.py); (0, 0) while it has none."""
    row = db.fetchone("SELECT cursor, recorded_at FROM event_retention WHERE namespace = ?", (namespace,))
    return (int(row[0]), int(row[1])) if row else (0, 0)


def list_events(db: Reader, event_filter: EventFilter, after: int, limit: int) -> list[Event]:
    """Events after the cursor, oldest first; from before the namespace's retention cursor, first one
    EVENTS_EXPIRED tombstone for the deleted range (unless the filter's types leave it out)."""
    gone, recorded_at = retention_cursor(db, event_filter.namespace)
    if after < gone and limit > 0:
        if not event_filter.types or EventType.EVENTS_EXPIRED in event_filter.types:
            gap = Event(event_filter.namespace, EventType.EVENTS_EXPIRED, "", "",
                        {"first_cursor": after + 1, "last_cursor": gone}, recorded_at, gone, expired=True)
            return [gap, *list_events(db, event_filter, gone, limit - 1)]
        after = gone
    sql = "SELECT * FROM events WHERE namespace = ? AND cursor > ?"
    params: list[object] = [event_filter.namespace, after]
    if event_filter.task_ids:
        sql += f" AND task_id IN ({','.join('?' * len(event_filter.task_ids))})"
        params.extend(sorted(event_filter.task_ids))
    if event_filter.types:
        sql += f" AND type IN ({','.join('?' * len(event_filter.types))})"
        params.extend(sorted(t.value for t in event_filter.types))
    if event_filter.key_ids:
        sql += f" AND key_id IN ({','.join('?' * len(event_filter.key_ids))})"
        params.extend(sorted(event_filter.key_ids))
    if event_filter.agent_ids:
        sql += f" AND agent_id IN ({','.join('?' * len(event_filter.agent_ids))})"
        params.extend(sorted(event_filter.agent_ids))
    sql += " ORDER BY cursor LIMIT ?"
    params.append(limit)
    now = now_us()
    return [event_from_row(row, now) for row in db.fetchall(sql, params)]


def _as_of(event: Event, now: int) -> Event:
    """A live event as a read at `now` gives it: a tombstone if what it carries has expired since it was
    queued (a slow subscriber)."""
    if event.expires_at is None or event.expires_at > now:
        return event
    return dataclasses.replace(event, payload=tombstone(event.payload), expired=True)


class EventLog:
    def __init__(self, read: ReadFunction, queue_size: int = 10_000) -> None:
        self._read = read
        self._queue_size = queue_size
        self._subscriptions: set[_Subscription] = set()
        self._closed = False

    def publish(self, events: list[Event]) -> None:
        """Hand committed events, in commit order, to every matching subscription."""
        for subscription in list(self._subscriptions):
            for event in events:
                if subscription.filter.matches(event):
                    subscription.offer(event)

    def backlogs(self) -> list[int]:
        """Events queued, not yet read, for each live subscription (for the lag metric)."""
        return [subscription.queue.qsize() for subscription in self._subscriptions]

    def close(self) -> None:
        """End every subscription (they raise EventLogClosed)."""
        self._closed = True
        for subscription in self._subscriptions:
            subscription.closed = True
            subscription.queue.put_nowait(None)

    @contextlib.contextmanager
    def watch(self, event_filter: EventFilter) -> Iterator[_Subscription]:
        """Register at once for matching changes; `await watch.wait()` returns when one commits."""
        if self._closed:
            raise EventLogClosed("the server is shutting down")
        subscription = _Subscription(event_filter, self._queue_size)
        self._subscriptions.add(subscription)
        try:
            yield subscription
        finally:
            self._subscriptions.discard(subscription)

    async def last_cursor(self, namespace: str) -> int:
        result: int = await self._read(last_cursor, namespace)
        return result

    async def list(self, event_filter: EventFilter, after: int, limit: int) -> list[Event]:
        result: list[Event] = await self._read(list_events, event_filter, after, limit)
        return result

    async def subscribe(self, event_filter: EventFilter, after: int) -> AsyncIterator[Event]:
        """Events after `after` (-1: from now on), replayed then live, each exactly once."""
        with self.watch(event_filter) as subscription:
            last = await self.last_cursor(event_filter.namespace) if after < 0 else after
            while True:
                subscription.overflowed = False  # buffer live events from here on
                async for event in self._replay(event_filter, last):
                    last = event.cursor
                    yield event
                while True:
                    event = await subscription.queue.get()
                    if event is None:
                        if subscription.closed:
                            raise EventLogClosed("the server is shutting down")
                        break  # overflowed: replay the gap from the database
                    if event.cursor > last:
                        last = event.cursor
                        yield _as_of(event, now_us())

    async def _replay(self, event_filter: EventFilter, after: int) -> AsyncIterator[Event]:
        while True:
            page = await self.list(event_filter, after, REPLAY_PAGE)
            for event in page:
                yield event
            if len(page) < REPLAY_PAGE:
                return
            after = page[-1].cursor
