"""Statements over one SQLite connection, used inside that connection's thread: the engine's Reader.

The writer's statements (writing=True) turn a write refused for lack of space into StorageFull, so the
batch stops at once (it is fatal to run_mutations) and every caller hears RESOURCE_EXHAUSTED, not INTERNAL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlean as sqlite3

from taskmem.core.errors import StorageFull

_SQLITE_IOERR = 10
_SQLITE_FULL = 13


def as_storage_full(error: BaseException) -> StorageFull | None:
    """StorageFull for a write SQLite refused for lack of space: SQLITE_FULL (the disk, or max_page_count), or an
    I/O error on write (SQLITE_IOERR_*: a full filesystem can fail the WAL's append or its fsync that way)."""
    code = getattr(error, "sqlite_errorcode", None)
    if not isinstance(error, sqlite3.Error) or code is None or code & 0xFF not in (_SQLITE_FULL, _SQLITE_IOERR):
        return None
    return StorageFull(f"SQLite: {error}")


class Statements:
    dialect = "sqlite"
    row_lock = ""

    def __init__(self, connection: sqlite3.Connection, *, writing: bool = False) -> None:
        self.connection = connection
        self._writing = writing

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        try:
            row: sqlite3.Row | None = self.connection.execute(sql, params).fetchone()
        except sqlite3.Error as error:
            raise self._translated(error) from error
        return row

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        try:
            return self.connection.execute(sql, params).fetchall()
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        try:
            self.connection.execute(sql, params)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            self.connection.executemany(sql, rows)
        except sqlite3.Error as error:
            raise self._translated(error) from error

    def _translated(self, error: sqlite3.Error) -> Exception:
        full = as_storage_full(error) if self._writing else None
        return error if full is None else full
