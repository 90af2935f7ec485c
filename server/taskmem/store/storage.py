"""The storage port: the one interface the api, engine and background rings use.

Callers hand the store's own functions (functions of a Reader, or mutations of a
Transaction, all defined in taskmem.store) to `Storage.read` and `Storage.write`;
they never see a connection, a cursor or a line of SQL, so the engine behind the
port can change without them. The port knows no engine: store/engines.py opens the one the
database setting names (taskmem.store.sqlite for a file, taskmem.store.postgres for a URL).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from taskmem.store.access import Transaction
from taskmem.store.event_log import EventLog
from taskmem.store.task_cache import TaskViewCache, ThreadReadCache

T = TypeVar("T")

# Told (writes, events, seconds) after each group commit; the server sets it for metrics.
BatchObserver = Callable[[int, int, float], None]
PayloadEncoder = Callable[[Any], dict[str, Any]]


Query = Callable[..., T]
Mutation = Callable[[Transaction], T]


class WriterClosed(Exception):
    """The storage is shutting down and takes no more writes."""


class Storage(abc.ABC):
    """A database behind the port: reads, durable writes with their events, the live event log."""

    events: EventLog
    task_views: TaskViewCache
    thread_reads: ThreadReadCache
    # True when other processes write the same database (PostgreSQL replicas): their events reach
    # this process's event log too, and background work must expect them.
    shared: bool = False
    # With replicas: how long a claim on shared work (a lease, a wait's claim) lasts unless renewed.
    lease_seconds: float = 10.0

    @abc.abstractmethod
    async def read(self, query: Query[T], *args: Any) -> T:
        """query(reader, *args) on a consistent snapshot of committed data."""

    @abc.abstractmethod
    async def write(self, mutation: Mutation[T], namespace: str, correlation_id: str) -> T:
        """mutation(transaction) committed with its events; returns once it is durable. A mutation
        that raises is rolled back alone and its exception re-raised here."""

    async def run_alone(self, name: str, start: Callable[[], Awaitable[None] | None],
                        stop: Callable[[], Awaitable[None] | None]) -> None:
        """Run a background service (webhook delivery, maintenance) on one process of those sharing the
        database. Here, the only one: start() now. PostgreSQL runs it under a lease (one replica at a time,
        taken over when that replica dies); stop() is called if the lease is lost. The caller still stops
        the service itself when it shuts down."""
        result = start()
        if result is not None:
            await result

    async def views_current(self) -> bool:
        """Call before serving a view from task_views or thread_reads: True once they hold nothing older than
        the writes committed before this call (else read past them). Here at once: this process's commits
        clear them before the writer answers, and no other process writes. PostgreSQL replicas catch up
        with the others' events first (store/postgres/view_freshness.py)."""
        return True

    @abc.abstractmethod
    def observe_batches(self, observer: BatchObserver) -> None:
        """Have observer told (writes, events, seconds) after each commit."""

    @abc.abstractmethod
    def observe_storage_full(self, observer: Callable[[int], None]) -> None:
        """Have observer told how many writes each refusal for lack of space (StorageFull) turned away."""

    @abc.abstractmethod
    async def close(self) -> None:
        """End subscriptions, finish queued writes, close every connection."""
