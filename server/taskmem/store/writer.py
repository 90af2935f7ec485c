"""One writer per process, grouping concurrent writes into one transaction.

Every mutation is a plain function of a Transaction. The writer takes whatever
mutations are queued (up to a batch size) and hands them to the engine's batch
runner, which runs them in its writer thread, each inside its own SAVEPOINT of one
transaction, and stores the events of the mutations that succeeded just before the
COMMIT; only then does the writer answer the callers and publish the batch's events.
A mutation that raises is rolled back alone; its neighbours still commit. One commit
(one fsync) and one thread round trip per batch is what makes many small concurrent
writes cheap.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from taskmem.core.events import Event, EventType
from taskmem.core.ids import now_us
from taskmem.store.storage import BatchObserver, Mutation, PayloadEncoder, Row, WriterClosed

log = logging.getLogger(__name__)

T = TypeVar("T")


class Statements(Protocol):
    """An engine's statements over its open connection (the engine's Reader, plus writes)."""

    dialect: str
    row_lock: str

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None: ...

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None: ...


class Transaction:
    """The port's Transaction: one mutation's statements, and the events it emits."""

    def __init__(self, statements: Statements, namespace: str, correlation_id: str, encode: PayloadEncoder) -> None:
        self.statements = statements
        self.dialect = statements.dialect
        self.row_lock = statements.row_lock
        self.fetchone = statements.fetchone
        self.fetchall = statements.fetchall
        self.execute = statements.execute
        self.executemany = statements.executemany
        self.namespace = namespace
        self.correlation_id = correlation_id
        self.now = now_us()
        self.events: list[Event] = []
        # Set by a mutation whose changes no cached view shows (leases, claims on background work), so a
        # commit of it with no event does not count as a change of unknown reach (see Writer's on_commit).
        self.quiet = False
        self._encode = encode

    def emit(self, event_type: EventType, task_id: str, resource: Any, extra: dict[str, Any] | None = None) -> Event:
        """Add an event to this mutation; the writer stores it in the same transaction and publishes it after commit."""
        payload = self._encode(resource) if resource is not None else {}
        if extra:
            payload.update(extra)
        event = Event(self.namespace, event_type, task_id, self.correlation_id, payload, self.now)
        self.events.append(event)
        return event


Job = tuple[Mutation[Any], str, str, "asyncio.Future[Any]"]
# A mutation's value, or its exception, the events it emitted (none when it failed), and whether it changed
# something with no event to say what (committed, no event, not quiet).
Outcome = tuple[Any, Exception | None, list[Event], bool]


def run_mutations(statements: Statements, batch: list[Job], encode: PayloadEncoder,
                  fatal: tuple[type[Exception], ...] = ()) -> list[Outcome]:
    """Inside an engine's open transaction: each mutation in its own SAVEPOINT, one that raises rolled back
    alone (its exception is its outcome), except the `fatal` errors, which lose the whole transaction."""
    outcomes: list[Outcome] = []
    for mutation, namespace, correlation_id, _ in batch:
        tx = Transaction(statements, namespace, correlation_id, encode)
        statements.execute("SAVEPOINT mutation")
        try:
            value = mutation(tx)
        except fatal:
            raise
        except Exception as error:  # the mutation's own failure: undo it alone
            statements.execute("ROLLBACK TO mutation")
            outcomes.append((None, error, [], False))
        else:
            outcomes.append((value, None, tx.events, not tx.events and not tx.quiet))
        statements.execute("RELEASE mutation")
    return outcomes
# Runs a batch in one transaction of the engine (in its writer thread) and says how each mutation went.
BatchRunner = Callable[[list[Job]], Awaitable[list[Outcome]]]


class Writer:
    def __init__(self, run_batch: BatchRunner, on_commit: Callable[[list[Event], bool], None],
                 batch_size: int = 512) -> None:
        """on_commit(events, silent) follows each commit that changed anything: the batch's events, and
        whether some mutation committed without emitting one (a change whose reach caches cannot tell)."""
        self._run_batch = run_batch
        self._on_commit = on_commit
        self._batch_size = batch_size
        self._queue: asyncio.Queue[Job | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self.on_batch: BatchObserver | None = None

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

    async def _commit(self, batch: list[Job]) -> None:
        started = time.perf_counter()
        try:
            outcomes = await self._run_batch(batch)
        except Exception as error:
            log.exception("group commit of %d writes failed", len(batch))
            for *_, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        committed: list[Event] = []
        silent = False
        for (*_, future), (value, error, events, unexplained) in zip(batch, outcomes):
            committed.extend(events)
            silent = silent or unexplained
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
