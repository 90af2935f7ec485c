"""One writer per process, grouping concurrent writes into one transaction.

Every mutation is a plain function of a Transaction. The writer takes whatever
mutations are queued (up to a batch size) and hands them to the engine's batch
runner, which runs them in its writer thread in one transaction and stores the events
of the mutations that succeeded just before the COMMIT; only then does the writer
answer the callers and publish the batch's events. One commit (one fsync) and one
thread round trip per batch is what makes many small concurrent writes cheap.

A batch first runs grouped: its mutations one after another with no savepoint each,
the writes they defer (taskmem.store.deferred_writes) run once per statement for the
whole batch. A mutation that raises before it changed anything (a task not found, a
stale etag) is simply left out. One that raises after it wrote cannot be undone alone
there, so the batch is rolled back to its start and run again the careful way: each
mutation in its own SAVEPOINT, one that raises rolled back alone while its neighbours
still commit. Running a mutation twice is safe because it is a plain function of the
transaction (PostgreSQL's deadlock retry relies on the same).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from taskmem.core.audit import ACTOR, Actor
from taskmem.core.events import Event, EventType
from taskmem.core.ids import now_us
from taskmem.store.deferred_writes import DeferredWrites, Merge
from taskmem.store.access import Row
from taskmem.store.storage import BatchObserver, Mutation, PayloadEncoder, WriterClosed

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


class _BatchState:
    """What the mutations of one grouped run share: the writes the earlier ones deferred, and `memo`."""

    def __init__(self) -> None:
        self.deferred = DeferredWrites()
        self.memo: dict[Hashable, Any] = {}
        # Set when the earlier mutations' deferred rows failed to write: even if the mutation that ran
        # them caught the error, the batch cannot commit as it stands.
        self.broken = False
        # Every event the batch's mutations have emitted so far: stored only after the last mutation, so a
        # later one that expires an earlier one's item (a count cap) finds its event here.
        self.events: list[Event] = []


_SELECT = ("SELECT", "select")


class Transaction:
    """The port's Transaction: one mutation's statements, the writes it defers, and the events it emits."""

    def __init__(self, statements: Statements, namespace: str, correlation_id: str, encode: PayloadEncoder,
                 batch: _BatchState, actor: Actor = Actor()) -> None:
        self._statements = statements
        self.dialect = statements.dialect
        self.row_lock = statements.row_lock
        self.namespace = namespace
        self.correlation_id = correlation_id
        # Who asked for this write (the API key's id, the caller's agent id): its events record them.
        self.actor = actor
        self.now = now_us()
        self.events: list[Event] = []
        # Set by a mutation whose changes no cached view shows (leases, claims on background work), so a
        # commit of it with no event does not count as a change of unknown reach (see Writer's on_commit).
        self.quiet = False
        # Set by a mutation that changed what its events do not name (a count cap expiring another task's
        # items): its commit counts as one of unknown reach, so every cached read goes.
        self.unexplained = False
        self._encode = encode
        self._batch = batch
        self.memo = batch.memo
        self.deferred = DeferredWrites()
        self.wrote = False  # whether this mutation changed the database (so its failure needs a rollback)

    @property
    def statements(self) -> Statements:
        """The engine's statements, bypassing deferral (start-up housekeeping only): counts as a write."""
        self._run_deferred()
        self.wrote = True
        return self._statements

    def _run_deferred(self) -> None:
        if self._batch.deferred:
            try:
                self._batch.deferred.run(self._statements)
            except Exception:
                self.wrote = self._batch.broken = True  # the batch's rows stand half-written
                raise
        if self.deferred:
            self.wrote = True
            self.deferred.run(self._statements)

    def _before(self, sql: str) -> None:
        """A read sees the deferred rows of its tables; anything else (a write, or a read that may write, like
        UPDATE … RETURNING) runs every deferred row first and forgets what `memo` remembered."""
        if sql.lstrip().startswith(_SELECT):
            if (self._batch.deferred and self._batch.deferred.touches(sql)) or (
                    self.deferred and self.deferred.touches(sql)):
                self._run_deferred()
            return
        self._run_deferred()
        self.memo.clear()
        self.wrote = True

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        self._before(sql)
        try:
            return self._statements.fetchone(sql, params)
        except Exception:
            self.wrote = True  # a failed statement may have left the transaction unusable (PostgreSQL)
            raise

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self._before(sql)
        try:
            return self._statements.fetchall(sql, params)
        except Exception:
            self.wrote = True
            raise

    def fetchone_stored(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """A SELECT that does not wait for the batch's deferred rows: the caller finds those in memo."""
        try:
            return self._statements.fetchone(sql, params)
        except Exception:
            self.wrote = True
            raise

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._run_deferred()
        self.memo.clear()
        self.wrote = True
        self._statements.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self._run_deferred()
        self.memo.clear()
        self.wrote = True
        self._statements.executemany(sql, rows)

    def defer(self, table: str, sql: str, params: Sequence[Any], key: Hashable | None = None,
              merge: Merge | None = None) -> None:
        """Run this write of `table` later, with the same statement's rows from the whole batch."""
        self.deferred.add(table, sql, params, key, merge)

    def emit(self, event_type: EventType, task_id: str, resource: Any, extra: dict[str, Any] | None = None) -> Event:
        """Add an event to this mutation; the writer stores it in the same transaction and publishes it after commit."""
        payload = self._encode(resource) if resource is not None else {}
        if extra:
            payload.update(extra)
        event = Event(self.namespace, event_type, task_id, self.correlation_id, payload, self.now,
                      key_id=self.actor.key_id, agent_id=self.actor.agent_id)
        self.events.append(event)
        self._batch.events.append(event)
        return event

    def unstored_events(self) -> list[Event]:
        """The events this batch has emitted so far, not yet in the events table."""
        return self._batch.events


# (mutation, namespace, correlation id, who asked, the caller's future)
Job = tuple[Mutation[Any], str, str, Actor, "asyncio.Future[Any]"]
# A mutation's value, or its exception, the events it emitted (none when it failed), and whether it changed
# something with no event to say what (committed, no event, not quiet).
Outcome = tuple[Any, Exception | None, list[Event], bool]


def run_mutations(statements: Statements, batch: list[Job], encode: PayloadEncoder,
                  fatal: tuple[type[Exception], ...] = ()) -> list[Outcome]:
    """Inside an engine's open transaction: the batch grouped, or, if a mutation that wrote raised, each
    mutation in its own SAVEPOINT (see the module's doc). The `fatal` errors lose the whole transaction."""
    statements.execute("SAVEPOINT batch")
    grouped = _run_grouped(statements, batch, encode, fatal)
    if grouped is None:
        statements.execute("ROLLBACK TO batch")
        grouped = _run_each_alone(statements, batch, encode, fatal)
    statements.execute("RELEASE batch")
    return grouped


def _run_grouped(statements: Statements, batch: list[Job], encode: PayloadEncoder,
                 fatal: tuple[type[Exception], ...]) -> list[Outcome] | None:
    """The mutations one after another, their deferred writes run together; None when one that had
    written raised (the caller rolls the batch back)."""
    shared = _BatchState()
    outcomes: list[Outcome] = []
    for mutation, namespace, correlation_id, actor, _ in batch:
        tx = Transaction(statements, namespace, correlation_id, encode, shared, actor)
        try:
            value = mutation(tx)
        except fatal:
            raise
        except Exception as error:
            if tx.wrote or shared.broken:
                return None
            shared.memo.clear()  # it may have remembered what it was about to write
            outcomes.append((None, error, [], False))  # it changed nothing: leaving it out undoes it
        else:
            if shared.broken:
                return None
            shared.deferred.absorb(tx.deferred)
            outcomes.append((value, None, tx.events, (not tx.events and not tx.quiet) or tx.unexplained))
    try:
        shared.deferred.run(statements)
    except fatal:
        raise
    except Exception:
        return None  # a deferred row failed: which mutation's, only running each alone can tell
    return outcomes


def _run_each_alone(statements: Statements, batch: list[Job], encode: PayloadEncoder,
                    fatal: tuple[type[Exception], ...]) -> list[Outcome]:
    """Each mutation in its own SAVEPOINT with its deferred writes: one that raises is rolled back alone."""
    outcomes: list[Outcome] = []
    emitted: list[Event] = []
    for mutation, namespace, correlation_id, actor, _ in batch:
        state = _BatchState()
        state.events = emitted
        tx = Transaction(statements, namespace, correlation_id, encode, state, actor)
        statements.execute("SAVEPOINT mutation")
        try:
            value = mutation(tx)
            tx.deferred.run(statements)
        except fatal:
            raise
        except Exception as error:  # the mutation's own failure: undo it alone
            statements.execute("ROLLBACK TO mutation")
            outcomes.append((None, error, [], False))
        else:
            outcomes.append((value, None, tx.events, (not tx.events and not tx.quiet) or tx.unexplained))
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
        # The caller's actor (core/audit.ACTOR, set per call by the api ring) goes with the write.
        self._queue.put_nowait((mutation, namespace, correlation_id, ACTOR.get(), future))
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
