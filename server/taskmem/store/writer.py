"""One writer for the whole database, grouping concurrent writes into one transaction.

Every mutation is an async function of a Transaction. The writer takes whatever
mutations are queued (up to a batch size), runs each inside its own SAVEPOINT in
one BEGIN IMMEDIATE … COMMIT, and only then answers the callers and publishes
the batch's events. A mutation that raises is rolled back alone; its neighbours
still commit. One commit (one fsync) per batch is what makes many small
concurrent writes cheap.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

import aiosqlite

from taskmem.core.events import Event, EventType
from taskmem.core.ids import now_us

log = logging.getLogger(__name__)

T = TypeVar("T")
Row = Any  # sqlite Row: indexable by column name

PayloadEncoder = Callable[[Any], dict[str, Any]]


class Reader:
    """Read access over one connection; both the read pool and a Transaction offer it."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self.connection = connection

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await self.connection.execute_fetchall(sql, params)
        return rows[0] if rows else None  # type: ignore[index]

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(await self.connection.execute_fetchall(sql, params))


class Transaction(Reader):
    """One mutation's view of the open transaction: statements, and the events it emits."""

    def __init__(self, connection: aiosqlite.Connection, namespace: str, correlation_id: str,
                 encode: PayloadEncoder) -> None:
        super().__init__(connection)
        self.namespace = namespace
        self.correlation_id = correlation_id
        self.now = now_us()
        self.events: list[Event] = []
        self._encode = encode

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        await self.connection.execute(sql, params)

    async def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        await self.connection.executemany(sql, rows)

    async def emit(self, event_type: EventType, task_id: str, resource: Any,
                   extra: dict[str, Any] | None = None) -> Event:
        """Append an event to the log inside this transaction; it is published after commit."""
        payload = self._encode(resource) if resource is not None else {}
        if extra:
            payload.update(extra)
        event = Event(self.namespace, event_type, task_id, self.correlation_id, payload, self.now)
        row = await self.connection.execute_insert(
            "INSERT INTO events (namespace, type, task_id, correlation_id, payload, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (event.namespace, event.type.value, task_id, event.correlation_id,
             json.dumps(payload, separators=(",", ":")), event.created_at),
        )
        assert row is not None
        event.cursor = row[0]
        self.events.append(event)
        return event


Mutation = Callable[[Transaction], Awaitable[T]]


class WriterClosed(Exception):
    """The writer is shutting down and takes no more work."""


class Writer:
    def __init__(self, connection: aiosqlite.Connection, encode: PayloadEncoder,
                 on_commit: Callable[[list[Event]], None], batch_size: int = 512) -> None:
        self._connection = connection
        self._encode = encode
        self._on_commit = on_commit
        self._batch_size = batch_size
        self._queue: asyncio.Queue[tuple[Mutation[Any], Transaction, asyncio.Future[Any]] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False

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
        tx = Transaction(self._connection, namespace, correlation_id, self._encode)
        self._queue.put_nowait((mutation, tx, future))
        # shield: a caller that goes away must not cancel a write already queued.
        return await asyncio.shield(future)

    async def _run(self) -> None:
        stopping = False
        while not stopping:
            first = await self._queue.get()
            batch = [] if first is None else [first]
            stopping = first is None
            while not stopping and len(batch) < self._batch_size and not self._queue.empty():
                item = self._queue.get_nowait()
                if item is None:
                    stopping = True
                else:
                    batch.append(item)
            if batch:
                await self._commit(batch)

    async def _commit(self, batch: list[tuple[Mutation[Any], Transaction, asyncio.Future[Any]]]) -> None:
        outcomes: list[tuple[asyncio.Future[Any], Transaction, Any, BaseException | None]] = []
        try:
            await self._connection.execute("BEGIN IMMEDIATE")
            for mutation, tx, future in batch:
                await self._connection.execute("SAVEPOINT mutation")
                try:
                    value = await mutation(tx)
                except Exception as error:  # the mutation's own failure: undo it alone
                    await self._connection.execute("ROLLBACK TO mutation")
                    outcomes.append((future, tx, None, error))
                else:
                    outcomes.append((future, tx, value, None))
                await self._connection.execute("RELEASE mutation")
            await self._connection.execute("COMMIT")
        except Exception as error:
            log.exception("group commit of %d writes failed", len(batch))
            if self._connection.in_transaction:
                await self._connection.execute("ROLLBACK")
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        committed: list[Event] = []
        for future, tx, value, error in outcomes:
            if error is None:
                committed.extend(tx.events)
            if future.done():
                continue
            if error is None:
                future.set_result(value)
            else:
                future.set_exception(error)
        if committed:
            self._on_commit(committed)
