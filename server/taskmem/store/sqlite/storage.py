"""The SQLite engine behind the storage port: reader threads, the group-commit writer, the event log."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any, TypeVar

from taskmem.core.events import Event
from taskmem.store.event_log import EventLog
from taskmem.store.sqlite.commit import run_batch
from taskmem.store.sqlite.connection import connect, ensure_parent, migrate
from taskmem.store.sqlite.statements import Statements
from taskmem.store.sqlite.thread import SqliteThread
from taskmem.store.storage import BatchObserver, Mutation, PayloadEncoder, Query, Storage
from taskmem.store.task_cache import TaskViewCache, ThreadReadCache
from taskmem.store.writer import Job, Outcome, Writer

T = TypeVar("T")


class SqliteStorage(Storage):
    def __init__(self, writer_thread: SqliteThread, readers: list[SqliteThread], encode: PayloadEncoder,
                 queue_size: int, batch_size: int) -> None:
        self._writer_thread = writer_thread
        self._readers = readers
        self._next_reader = itertools.cycle(readers)
        self._encode = encode
        self.events = EventLog(self.read, queue_size)
        self.task_views = TaskViewCache()
        self.thread_reads = ThreadReadCache()
        self.writer = Writer(self._run_batch, self._committed, batch_size)

    @classmethod
    async def open_file(cls, path: str, encode: PayloadEncoder, *, queue_size: int = 10_000,
                        batch_size: int = 512, readers: int = 2, synchronous: str = "FULL") -> SqliteStorage:
        ensure_parent(path)
        connector = functools.partial(connect, path, synchronous)
        writer_thread = SqliteThread(connector, "taskmem-writer")
        await writer_thread.start()
        try:
            await writer_thread.run(migrate)
        except BaseException:
            await writer_thread.close()  # a refused file (a newer schema) must not keep the process alive
            raise
        reader_threads = [SqliteThread(connector, f"taskmem-reader-{n}") for n in range(readers)]
        for thread in reader_threads:
            await thread.start()
        storage = cls(writer_thread, reader_threads, encode, queue_size, batch_size)
        storage.writer.start()
        return storage

    async def _run_batch(self, batch: list[Job]) -> list[Outcome]:
        return await self._writer_thread.run(lambda connection: run_batch(connection, batch, self._encode))

    def _committed(self, events: list[Event], silent: bool) -> None:
        self.task_views.invalidate(events)
        self.thread_reads.invalidate(events, silent)
        if events:
            self.events.publish(events)

    async def read(self, query: Query[T], *args: Any) -> T:
        """Run query(reader, *args) in a reader thread; WAL lets it read while the writer writes."""
        return await next(self._next_reader).run(lambda connection: query(Statements(connection), *args))

    async def write(self, mutation: Mutation[T], namespace: str, correlation_id: str) -> T:
        return await self.writer.submit(mutation, namespace, correlation_id)

    def observe_batches(self, observer: BatchObserver) -> None:
        self.writer.on_batch = observer

    def observe_storage_full(self, observer: Callable[[int], None]) -> None:
        self.writer.on_storage_full = observer

    async def close(self) -> None:
        """End subscriptions, finish queued writes, close every connection."""
        self.events.close()
        await self.writer.close()
        for thread in [*self._readers, self._writer_thread]:
            await thread.close()
