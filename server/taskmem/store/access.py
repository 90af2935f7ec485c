"""What a store function is handed: a Reader for a read, a Transaction for a mutation, and their Rows.

Apart from the port (storage.py) so the event log, which the port holds, can name them too.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol

from taskmem.core.audit import Actor
from taskmem.core.events import Event, EventType


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
    # Who asked for the write (core/audit.py): its events record the key's id and the agent id.
    actor: Actor
    now: int  # microseconds since the epoch, one instant for the whole mutation
    events: list[Event]
    # What the batch's mutations may remember between them (e.g. a task's plan version) until any of
    # them writes directly: execute, executemany, or a read that is not a SELECT clear it.
    memo: dict[Hashable, Any]
    # Set by a mutation whose changes no cached view shows (leases, claims): committed without an event, it
    # is not a change of unknown reach, so it leaves the caches alone.
    quiet: bool
    # Set by a mutation that changed what its events do not name (a count cap expiring another task's items):
    # its commit counts as one of unknown reach, and every cached read goes.
    unexplained: bool

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

    def unstored_events(self) -> list[Event]:
        """The events this transaction's batch has emitted so far (stored only at its end)."""
