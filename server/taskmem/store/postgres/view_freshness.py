"""Cached views (GetTask's, BuildContext's thread reads) kept correct across replicas.

Each replica's caches drop a task's or thread's views when an event naming it is published here: its own
events as its writer commits them, every replica's as the event tail (event_tail.py) reads them. That
alone is late by the tail's lag, so before a cached view may be served the caller asks `current()`:

1. It reads the events table's last cursor and the silent-commit count (event_cursor, one row) with a
   query sent after the call began; that row is updated in the same transaction as any batch's events,
   so every write committed before the call began is at or below that cursor (or in that count).
2. It waits until the tail here has published every event up to that cursor; publishing drops the
   views each event names, and bumps the caches' epochs, before the tail's position moves past it.
3. A change of the silent-commit count (a write of unknown reach, on any replica) drops every thread read.

So a read that began after a write committed, anywhere, never gets a view cached before that write:
the view was either dropped in step 2 or 3, or it was stored under an epoch taken after the write's
event was published (a read racing a publish is not stored at all: the caches' epoch check). Concurrent
callers share one query per round (a caller waits for a round whose query was sent after it arrived),
so a burst of cached GetTasks costs one small read, not one each. When the tail does not catch up within
CATCH_UP_SECONDS (it normally takes a few milliseconds; far behind after a burst of writes, or the
database unreachable), `current()` says False and callers read the database past the caches: a read
never waits long on the tail, and is correct either way.

The read of step 1 is the one read of the engine on psycopg's async API, on a connection of its own:
one statement, no snapshot to share with others, and rounds run one at a time, so it needs no pool and
no reader thread; bench/pg_read_path_bench.py measured it cheaper in CPU per call than the same
statement through a reader thread (read_path.md has the figures).
"""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg

from taskmem.store.postgres.event_tail import EventTail
from taskmem.store.access import Reader
from taskmem.store.task_cache import ThreadReadCache

CATCH_UP_SECONDS = 0.05
_MARKS = "SELECT last, silent_commits FROM event_cursor WHERE id = 1"


def cache_marks(db: Reader) -> tuple[int, int]:
    """(last event cursor, silent commits) as committed now."""
    row = db.fetchone(_MARKS)
    return (int(row[0]), int(row[1])) if row else (0, 0)


class ViewFreshness:
    def __init__(self, url: str, tail: EventTail, thread_reads: ThreadReadCache) -> None:
        self._url = url
        self._connection: psycopg.AsyncConnection[Any] | None = None
        self._tail = tail
        self._thread_reads = thread_reads
        self._silent_seen = -1
        self._next: asyncio.Future[tuple[int, int]] | None = None  # the round callers arriving now join
        self._running = False
        self._round_task: asyncio.Task[None] | None = None  # held: the loop keeps only a weak reference

    async def current(self) -> bool:
        """True once the caches hold nothing older than the writes committed before this call."""
        try:
            cursor, silent = await self._marks()
        except Exception:  # the database is unreachable: the caller's own read will say so
            return False
        if silent != self._silent_seen:
            if self._silent_seen >= 0:
                self._thread_reads.invalidate([], True)
            self._silent_seen = max(self._silent_seen, silent)
        return await self._tail.reach(cursor, CATCH_UP_SECONDS)

    async def _marks(self) -> tuple[int, int]:
        if self._next is None:
            self._next = asyncio.get_running_loop().create_future()
            if not self._running:
                self._running = True
                self._round_task = asyncio.get_running_loop().create_task(self._rounds())
        return await asyncio.shield(self._next)

    async def _rounds(self) -> None:
        try:
            while self._next is not None:
                # Everyone waiting on this round arrived before its query is sent (no await in between).
                round_, self._next = self._next, None
                try:
                    round_.set_result(await self._read_marks())
                except Exception as error:
                    round_.set_exception(error)
        finally:
            self._running = False

    async def _read_marks(self) -> tuple[int, int]:
        """cache_marks on this object's connection (autocommit: the statement sees every commit before it)."""
        if self._connection is None or self._connection.closed or self._connection.broken:
            self._connection = await psycopg.AsyncConnection.connect(self._url, autocommit=True)
        row = await (await self._connection.execute(_MARKS)).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    async def close(self) -> None:
        if self._round_task is not None:
            self._round_task.cancel()
        if self._connection is not None:
            await self._connection.close()
