"""Statements over one PostgreSQL connection, the store's SQL translated as it goes (see sql.py)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import psycopg

from taskmem.store.postgres.connection import Row
from taskmem.store.postgres.sql import to_postgres


class Statements:
    dialect = "postgres"

    def __init__(self, connection: psycopg.Connection[Row], *, writing: bool = False) -> None:
        self.connection = connection
        self.row_lock = " FOR UPDATE" if writing else ""

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        return self.connection.execute(to_postgres(sql), params).fetchone()  # type: ignore[arg-type]

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.connection.execute(to_postgres(sql), params).fetchall()  # type: ignore[arg-type]

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.connection.execute(to_postgres(sql), params)  # type: ignore[arg-type]

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        rows = list(rows)
        if rows:
            with self.connection.cursor() as cursor:
                cursor.executemany(to_postgres(sql), rows)  # type: ignore[arg-type]
