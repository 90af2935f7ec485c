"""One writer for the whole database, grouping concurrent writes into one transaction.

Every mutation is a plain function of a Transaction. The writer takes whatever
mutations are queued (up to a batch size) and runs them, in its own thread, each
inside its own SAVEPOINT in one BEGIN IMMEDIATE … COMMIT, appending the events of
the mutations that succeeded just before the COMMIT; only then does it answer the
callers and publish the batch's events. A mutation that raises is
rolled back alone; its neighbours still commit. One commit (one fsync) and one
thread round trip per batch is what makes many small concurrent writes cheap.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

import sqlean as sqlite3

from taskmem.core.events import Event, EventType
from taskmem.core.ids import now_us
from taskmem.store.sqlite_thread import SqliteThread

log = logging.getLogger(__name__)

T = TypeVar("T")
Row = sqlite3.Row

PayloadEncoder = Callable[[Any], dict[str, Any]]


class Reader:
    """Read access over one connection, used inside that connection's thread."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row: Row | None = self.connection.execute(sql, params).fetchone()
        return row

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.connection.execute(sql, params).fetchall()


class Transaction(Reader):
    """One mutation's view of the open transaction: statements, and the events it emits."""

    def __init__(self, connection: sqlite3.Connection, namespace: str, correlation_id: str,
                 encode: PayloadEncoder) -> None:
        super().__init__(connection)
        self.namespace = namespace
        self.correlation_id = correlation_id
        self.now = now_us()
        self.events: list[Event] = []
        self._encode = encode

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)

    def emit(self, event_type: EventType, task_id: str, resource: Any, extra: dict[str, Any] | None = None) -> Event:
        """Add an event to this mutation; the writer stores it in the same transaction and publishes it after commit."""
        payload = self._encode(resource) if resource is not None else {}
        if extra:
            payload.update(extra)
        event = Event(self.namespace, event_type, task_id, self.correlation_id, payload, self.now)
        self.events.append(event)
        return event


def _store_events(connection: sqlite3.Connection, events: list[Event]) -> None:
    """Append a batch's events in one statement; cursors follow on from the log's last one."""
    last = connection.execute("SELECT coalesce(max(cursor), 0) FROM events").fetchone()[0]
    for offset, event in enumerate(events, start=1):
        event.cursor = last + offset
    connection.executemany(
        "INSERT INTO events (cursor, namespace, type, task_id, correlation_id, payload, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(e.cursor, e.namespace, e.type.value, e.task_id, e.correlation_id,
          json.dumps(e.payload, separators=(",", ":")), e.created_at) for e in events])


Mutation = Callable[[Transaction], T]
_Job = tuple[Mutation[Any], str, str, "asyncio.Future[Any]"]


class WriterClosed(Exception):
    """The writer is shutting down and takes no more work."""


class Writer:
    def __init__(self, thread: SqliteThread, encode: PayloadEncoder,
                 on_commit: Callable[[list[Event], bool], None], batch_size: int = 512) -> None:
        """on_commit(events, silent) follows each commit that changed anything: the batch's events, and
        whether some mutation committed without emitting one (a change whose reach caches cannot tell)."""
        self._thread = thread
        self._encode = encode
        self._on_commit = on_commit
        self._batch_size = batch_size
        self._queue: asyncio.Queue[_Job | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        # Told (writes, events, seconds) after each group commit; the server sets it for metrics.
        self.on_batch: Callable[[int, int, float], None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="taskmem-writer")

    async def close(self) -> None:
        """Finish every queued write, then stop."""
        self._closed = True
        self._queue.put_nowait(None)
        if self._task is not None:
            await self._task

    async def submit(self, mutation: Mutation[T], namespace: str, correlation_id: str) -> T:
        """Run mutation in the next group commit; returns once it is durable."""
        if self._closed:
            raise WriterClosed("the server is shutting down")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((mutation, namespace, correlation_id, future))
        # A caller that goes away cancels only its future: the queued write still
        # runs (the batch skips answering a done future).
        return await future

    async def _run(self) -> None:
        stopping = False
        while not stopping:
            first = await self._queue.get()
            batch = [] if first is None else [first]
            stopping = first is None
            while not stopping and len(batch) < self._batch_size and not self._queue.empty():
                job = self._queue.get_nowait()
                if job is None:
                    stopping = True
                else:
                    batch.append(job)
            if batch:
                await self._commit(batch)

    async def _commit(self, batch: list[_Job]) -> None:
        started = time.perf_counter()
        try:
            outcomes = await self._thread.run(lambda connection: self._run_batch(connection, batch))
        except Exception as error:
            log.exception("group commit of %d writes failed", len(batch))
            for *_, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        committed: list[Event] = []
        silent = False
        for (*_, future), (value, error, events) in zip(batch, outcomes):
            committed.extend(events)
            silent = silent or (error is None and not events)
            if future.done():
                continue
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)
        if self.on_batch is not None:
            self.on_batch(len(batch), len(committed), time.perf_counter() - started)
        if committed or silent:
            self._on_commit(committed, silent)

    def _run_batch(self, connection: sqlite3.Connection,
                   batch: list[_Job]) -> list[tuple[Any, Exception | None, list[Event]]]:
        """In the writer thread: every mutation in its savepoint, then one COMMIT."""
        outcomes: list[tuple[Any, Exception | None, list[Event]]] = []
        connection.execute("BEGIN IMMEDIATE")
        try:
            for mutation, namespace, correlation_id, _ in batch:
                tx = Transaction(connection, namespace, correlation_id, self._encode)
                connection.execute("SAVEPOINT mutation")
                try:
                    value = mutation(tx)
                except Exception as error:  # the mutation's own failure: undo it alone
                    connection.execute("ROLLBACK TO mutation")
                    outcomes.append((None, error, []))
                else:
                    outcomes.append((value, None, tx.events))
                connection.execute("RELEASE mutation")
            events = [event for _, _, mutation_events in outcomes for event in mutation_events]
            if events:
                _store_events(connection, events)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        return outcomes
