"""Writes a group commit's mutations defer, to run them per statement rather than per mutation.

A mutation defers a write (`Transaction.defer`) that it does not read back itself: an action's
INSERT, the touch of its task. The batch collects the deferred rows of all its mutations by
statement and runs each statement once with executemany, which costs one call where a batch
of 64 mutations made 64. Rows deferred under one key merge into one (64 touches of a task
become one UPDATE that adds 64 to its revision). Nothing waits past the point where it could be
seen: the writer runs them before any statement that names their table or writes, and before
COMMIT.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol

# Two rows of one statement deferred under the same key → the one row that does both.
Merge = Callable[[Sequence[Any], Sequence[Any]], Sequence[Any]]


class _Executor(Protocol):
    def executemany(self, sql: str, rows: Any) -> None: ...


class _Statement:
    __slots__ = ("table", "rows", "keyed", "merge")

    def __init__(self, table: str, merge: Merge | None) -> None:
        self.table = table
        self.rows: list[Sequence[Any]] = []
        self.keyed: dict[Hashable, Sequence[Any]] = {}
        self.merge = merge


class DeferredWrites:
    """Deferred rows by statement, in the order each statement was first deferred."""

    def __init__(self) -> None:
        self._statements: dict[str, _Statement] = {}

    def __bool__(self) -> bool:
        return bool(self._statements)

    def add(self, table: str, sql: str, params: Sequence[Any], key: Hashable | None = None,
            merge: Merge | None = None) -> None:
        statement = self._statements.get(sql)
        if statement is None:
            statement = self._statements[sql] = _Statement(table, merge)
        if key is None:
            statement.rows.append(params)
            return
        earlier = statement.keyed.get(key)
        statement.keyed[key] = params if earlier is None or merge is None else merge(earlier, params)

    def absorb(self, other: DeferredWrites) -> None:
        """Take over the rows of `other` (a mutation's, once it succeeded), after those already here."""
        for sql, theirs in other._statements.items():
            for params in theirs.rows:
                self.add(theirs.table, sql, params)
            for key, params in theirs.keyed.items():
                self.add(theirs.table, sql, params, key, theirs.merge)

    def touches(self, sql: str) -> bool:
        """Whether a read of `sql` could see a deferred row (it names a deferred table; by name, so a table
        whose name holds another's costs only an early run)."""
        return any(statement.table in sql for statement in self._statements.values())

    def run(self, statements: _Executor) -> None:
        """Execute every deferred row, one executemany per statement, and forget them."""
        pending, self._statements = self._statements, {}
        for sql, statement in pending.items():
            if statement.rows:
                statements.executemany(sql, statement.rows)
            if statement.keyed:
                statements.executemany(sql, list(statement.keyed.values()))
