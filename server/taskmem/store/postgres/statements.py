"""Statements over one PostgreSQL connection, the store's SQL translated as it goes (see sql.py).

The writer's statements (writing=True) turn a write refused for lack of space into StorageFull, so the
batch stops at once (it is fatal to run_mutations) and every caller hears RESOURCE_EXHAUSTED, not INTERNAL.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from taskmem.core.errors import StorageFull
from taskmem.store.postgres.connection import Row
from taskmem.store.postgres.sql import to_postgres


_DISK_FULL = "53100"  # disk_full: "could not extend file …: No space left on device"


def as_storage_full(error: BaseException) -> StorageFull | None:
    """StorageFull for a write PostgreSQL refused for lack of space (SQLSTATE 53100, or ENOSPC in its words)."""
    if not isinstance(error, psycopg.Error):
        return None
    if error.sqlstate == _DISK_FULL or "No space left on device" in str(error):
        return StorageFull(f"PostgreSQL: {str(error).strip().splitlines()[0]}")
    return None


class Statements:
    dialect = "postgres"

    def __init__(self, connection: psycopg.Connection[Row], *, writing: bool = False) -> None:
        self.connection = connection
        self.row_lock = " FOR UPDATE" if writing else ""
        self._writing = writing

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        try:
            return self.connection.execute(to_postgres(sql), params).fetchone()  # type: ignore[arg-type]
        except psycopg.Error as error:
            raise self._translated(error) from error

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        try:
            return self.connection.execute(to_postgres(sql), params).fetchall()  # type: ignore[arg-type]
        except psycopg.Error as error:
            raise self._translated(error) from error

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        try:
            self.connection.execute(to_postgres(sql), params)  # type: ignore[arg-type]
        except psycopg.Error as error:
            raise self._translated(error) from error

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            try:
                with self.connection.cursor() as cursor:
                    cursor.executemany(to_postgres(sql), rows)  # type: ignore[arg-type]
            except psycopg.Error as error:
                raise self._translated(error) from error

    def _translated(self, error: psycopg.Error) -> Exception:
        full = as_storage_full(error) if self._writing else None
        return error if full is None else full
