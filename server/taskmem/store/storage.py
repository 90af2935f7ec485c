"""The storage port: the one interface the api, engine and background rings use.

Callers hand the store's own functions (functions of a Reader, or mutations of a
Transaction, all defined in taskmem.store) to `Storage.read` and `Storage.write`;
they never see a connection, a cursor or a line of SQL, so the engine behind the
port can change without them. `Storage.open(database)` picks the engine from the
database setting: a file path is the embedded SQLite engine (taskmem.store.sqlite), a
postgresql:// URL the PostgreSQL engine (taskmem.store.postgres) that several replicas share.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from taskmem.core.events import Event, EventType
from taskmem.store.event_log import EventLog
from taskmem.store.task_cache import TaskViewCache, ThreadReadCache

T = TypeVar("T")

# Told (writes, events, seconds) after each group commit; the server sets it for metrics.
BatchObserver = Callable[[int, int, float], None]
PayloadEncoder = Callable[[Any], dict[str, Any]]


class Row(Protocol):
    """One result row, readable by column name or by position."""

    def __getitem__(self, key: int | str) -> Any: ...

    def keys(self) -> list[str]: ...


class Reader(Protocol):
    """Read access to the database, given to a store function for the length of one read."""

    # "sqlite" or "postgres": the few store functions whose SQL cannot be shared (full-text and
    # vector search, their indexes) choose their engine's statements by it.
    dialect: str
    # Appended to a SELECT of one row that a mutation reads in order to change it: " FOR UPDATE" in a
    # PostgreSQL write, so a replica changing the same row at once waits and then reads the new version
    # (under READ COMMITTED both would otherwise change the old one: a lost update, a missed etag);
    # "" on SQLite, whose one writer is alone, and in reads.
    row_lock: str

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...


class Transaction(Reader, Protocol):
    """One mutation's view of the open transaction: its statements, and the events it emits."""

    namespace: str
    correlation_id: str
    now: int  # microseconds since the epoch, one instant for the whole mutation
    events: list[Event]
    # What the batch's mutations may remember between them (e.g. a task's plan version) until any of
    # them writes directly: execute, executemany, or a read that is not a SELECT clear it.
    memo: dict[Hashable, Any]
    # Set by a mutation whose changes no cached view shows (leases, claims): committed without an event, it
    # is not a change of unknown reach, so it leaves the caches alone.
    quiet: bool

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...

    def fetchone_stored(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """A SELECT of what earlier batches stored, not waiting for this batch's deferred rows (fetchone
        runs those first when it names their table): for a caller that keeps its own deferred rows in memo."""

    def defer(self, table: str, sql: str, params: Sequence[Any], key: Hashable | None = None,
              merge: Callable[[Sequence[Any], Sequence[Any]], Sequence[Any]] | None = None) -> None:
        """Run this write of `table` later, with the batch's other rows of the same statement (one
        executemany), before any statement that names `table` or writes, and before COMMIT. For a write
        the mutation does not read back. Rows deferred under one key merge: merge(earlier, later)."""

    def emit(self, event_type: EventType, task_id: str, resource: Any,
             extra: dict[str, Any] | None = None) -> Event: ...


Query = Callable[..., T]
Mutation = Callable[[Transaction], T]


class WriterClosed(Exception):
    """The storage is shutting down and takes no more writes."""


def is_postgres(database: str) -> bool:
    """Whether the database setting names a PostgreSQL database (else it is an SQLite file)."""
    return database.startswith(("postgresql://", "postgres://"))


def apply_migrations(database: str) -> list[str]:
    """Bring the database's schema up to date (creating an SQLite file if needed); returns the migrations
    applied. Servers do this themselves at start; `taskmem migrate` does it ahead of a rollout."""
    if is_postgres(database):
        from taskmem.store.postgres import connection as postgres

        with postgres.connect(database) as opened:
            return postgres.migrate(opened)
    from taskmem.store.sqlite import connection as sqlite

    sqlite.ensure_parent(database)
    opened_file = sqlite.connect(database)
    try:
        return sqlite.migrate(opened_file)
    finally:
        opened_file.close()


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

    @staticmethod
    async def open(database: str, encode: PayloadEncoder, *, queue_size: int = 10_000, batch_size: int = 512,
                   readers: int = 2, synchronous: str = "FULL") -> Storage:
        """Open (creating and migrating as needed) the database the setting names: a postgresql:// URL, or
        an SQLite file. Each engine is imported only when used."""
        if is_postgres(database):
            from taskmem.store.postgres.storage import PostgresStorage

            return await PostgresStorage.open_url(database, encode, queue_size=queue_size, batch_size=batch_size,
                                                  readers=max(readers, 4))
        from taskmem.store.sqlite.storage import SqliteStorage

        return await SqliteStorage.open_file(database, encode, queue_size=queue_size, batch_size=batch_size,
                                        readers=readers, synchronous=synchronous)

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
    async def close(self) -> None:
        """End subscriptions, finish queued writes, close every connection."""
