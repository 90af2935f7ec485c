"""The PostgreSQL engine behind the storage port: one of any number of replicas on one database.

The store's functions are plain (synchronous) functions of a Reader or a Transaction,
shared by both engines; here they run in threads on psycopg 3 connections, as on
SQLite they run in the connection's thread: reads on a psycopg_pool pool, each read one
REPEATABLE READ snapshot; writes through the same group-commit writer as SQLite, on one
connection of their own (store/postgres/commit.py). Events reach this replica's
subscribers through the event tail (store/postgres/event_tail.py), which follows the
events table in cursor order, so every replica's subscribers see every replica's writes.

GetTask's rendered views and BuildContext's thread reads are cached as on SQLite, and dropped by the
events of every replica as the event tail publishes them; before a cached view is served, the caches
catch up with every write committed until then (store/postgres/view_freshness.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
import psycopg_pool

from taskmem.core.events import Event
from taskmem.store.event_log import EventLog
from taskmem.store.postgres.commit import run_batch
from taskmem.store.postgres.connection import Row, configure, connect, migrate
from taskmem.store.postgres.event_tail import EventTail
from taskmem.store.postgres.leases import LEASE_SECONDS, LeasedService, Service
from taskmem.store.postgres.statements import Statements
from taskmem.store.postgres.view_freshness import ViewFreshness
from taskmem.store.storage import BatchObserver, Mutation, PayloadEncoder, Query, Storage
from taskmem.store.task_cache import TaskViewCache, ThreadReadCache
from taskmem.store.writer import Job, Outcome, Writer

T = TypeVar("T")


def _configure_reader(connection: psycopg.Connection[Any]) -> None:
    configure(connection)
    connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    connection.read_only = True


class _WriterConnection:
    """The writer's connection, confined to one thread; opened again when the server dropped it."""

    def __init__(self, url: str) -> None:
        self._url = url
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="taskmem-pg-writer")
        self._connection: psycopg.Connection[Row] | None = None

    def _open(self) -> psycopg.Connection[Row]:
        if self._connection is None or self._connection.broken or self._connection.closed:
            self._connection = connect(self._url)
        return self._connection

    async def run(self, function: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self._executor, lambda: function(self._open()))

    async def close(self) -> None:
        if self._connection is not None:
            await asyncio.get_running_loop().run_in_executor(self._executor, self._connection.close)
        self._executor.shutdown(wait=False)  # its one thread is idle now; never block the event loop on it


class PostgresStorage(Storage):
    shared = True

    def __init__(self, url: str, encode: PayloadEncoder, queue_size: int, batch_size: int, readers: int) -> None:
        self._encode = encode
        self._writer_connection = _WriterConnection(url)
        self._pool = psycopg_pool.ConnectionPool(url, min_size=readers, max_size=readers, open=False,
                                                 configure=_configure_reader, name="taskmem-readers")
        self._read_threads = concurrent.futures.ThreadPoolExecutor(readers, thread_name_prefix="taskmem-pg-reader")
        self.events = EventLog(self.read, queue_size)
        self.task_views = TaskViewCache()
        self.thread_reads = ThreadReadCache()
        self.writer = Writer(self._run_batch, self._committed, batch_size)
        self._tail = EventTail(url, self._published)
        self._freshness = ViewFreshness(url, self._tail, self.thread_reads)
        self._leases: list[LeasedService] = []
        self.lease_seconds = LEASE_SECONDS

    @classmethod
    async def open_url(cls, url: str, encode: PayloadEncoder, *, queue_size: int = 10_000, batch_size: int = 512,
                       readers: int = 4) -> PostgresStorage:
        storage = cls(url, encode, queue_size, batch_size, readers)
        try:
            await storage._writer_connection.run(migrate)
        except BaseException:
            await storage._writer_connection.close()  # a refused database (a newer schema): let the process end
            storage._read_threads.shutdown(wait=False)
            raise
        await asyncio.to_thread(storage._pool.open, True)
        await storage._tail.start()
        storage.writer.start()
        return storage

    async def _run_batch(self, batch: list[Job]) -> list[Outcome]:
        result: list[Outcome] = await self._writer_connection.run(
            lambda connection: run_batch(connection, batch, self._encode))
        return result

    def _committed(self, events: list[Event], silent: bool) -> None:
        """This replica's own commit: its views go at once (the tail publishes its events a moment later)."""
        self.task_views.invalidate(events)
        self.thread_reads.invalidate(events, silent)
        self._tail.wake()

    def _published(self, events: list[Event]) -> None:
        """Events of every replica, in cursor order: the views they name go before the tail moves past them."""
        self.task_views.invalidate(events)
        self.thread_reads.invalidate(events, False)
        self.events.publish(events)

    async def views_current(self) -> bool:
        return await self._freshness.current()

    def _read(self, query: Query[T], args: tuple[Any, ...]) -> T:
        with self._pool.connection() as connection:
            return query(Statements(connection), *args)

    async def read(self, query: Query[T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._read_threads, self._read, query, args)

    async def write(self, mutation: Mutation[T], namespace: str, correlation_id: str) -> T:
        return await self.writer.submit(mutation, namespace, correlation_id)

    async def run_alone(self, name: str, start: Service, stop: Service) -> None:
        """Run the service while this replica holds its lease (store/postgres/leases.py); returns at once."""
        self._leases.append(LeasedService(self.write, name, start, stop, self.lease_seconds))

    def observe_batches(self, observer: BatchObserver) -> None:
        self.writer.on_batch = observer

    def observe_storage_full(self, observer: Callable[[int], None]) -> None:
        self.writer.on_storage_full = observer

    async def close(self) -> None:
        """End subscriptions, finish queued writes, close every connection."""
        self.events.close()
        for lease in self._leases:
            await lease.close()
        await self.writer.close()
        await self._tail.close()
        await self._freshness.close()
        await self._writer_connection.close()
        await asyncio.to_thread(self._pool.close)
        self._read_threads.shutdown(wait=False, cancel_futures=True)
