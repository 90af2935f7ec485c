"""The storage facade the api ring uses: a read pool, the group-commit writer and the event log."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypeVar

import aiosqlite
import sqlean as sqlite3

from taskmem.store.database import ensure_parent, migrate, open_connection
from taskmem.store.event_log import EventLog
from taskmem.store.writer import Mutation, PayloadEncoder, Reader, Row, Writer

T = TypeVar("T")


class ReadPool(Reader):
    """A few read-only connections used in turn; WAL lets them read while the writer writes."""

    def __init__(self, connections: list[aiosqlite.Connection]) -> None:
        super().__init__(connections[0])
        self._connections = connections
        self._next = itertools.cycle(connections)

    async def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = await next(self._next).execute_fetchall(sql, params)
        return rows[0] if rows else None  # type: ignore[index]

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return list(await next(self._next).execute_fetchall(sql, params))

    async def close(self) -> None:
        for connection in self._connections:
            await connection.close()


class Storage:
    def __init__(self, write_connection: aiosqlite.Connection, reader: ReadPool, encode: PayloadEncoder,
                 queue_size: int, batch_size: int) -> None:
        self._write_connection = write_connection
        self.reader = reader
        self.events = EventLog(reader, queue_size)
        self.writer = Writer(write_connection, encode, self.events.publish, batch_size)

    @classmethod
    async def open(cls, path: str, encode: PayloadEncoder, *, queue_size: int = 10_000,
                   batch_size: int = 512, readers: int = 2, synchronous: str = "FULL") -> Storage:
        ensure_parent(path)
        write_connection = await open_connection(path, synchronous)
        write_connection.row_factory = sqlite3.Row
        await migrate(write_connection)
        pool = []
        for _ in range(readers):
            connection = await open_connection(path, synchronous)
            connection.row_factory = sqlite3.Row
            pool.append(connection)
        storage = cls(write_connection, ReadPool(pool), encode, queue_size, batch_size)
        storage.writer.start()
        return storage

    async def write(self, mutation: Mutation[T], namespace: str, correlation_id: str) -> T:
        return await self.writer.submit(mutation, namespace, correlation_id)

    async def close(self) -> None:
        """Finish queued writes, end subscriptions, close every connection."""
        self.events.close()
        await self.writer.close()
        await self.reader.close()
        await self._write_connection.close()
