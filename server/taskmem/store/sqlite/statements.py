"""Statements over one SQLite connection, used inside that connection's thread: the engine's Reader."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import sqlean as sqlite3


class Statements:
    dialect = "sqlite"
    row_lock = ""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self.connection = connection

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self.connection.execute(sql, params).fetchone()
        return row

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return self.connection.execute(sql, params).fetchall()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.connection.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.connection.executemany(sql, rows)
