"""Connections to PostgreSQL (psycopg 3): rows readable by name and position, flags as 0/1, migrations."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg.adapt import Dumper
from psycopg.pq import Format

from taskmem.store.migration_files import RECORDED_SQL, check_not_newer, migration_files, recorded_of

log = logging.getLogger(__name__)

# Any 64-bit number the replicas agree on: the advisory lock that lets one of them migrate at a time.
_MIGRATION_LOCK = 0x7461736B6D656D  # "taskmem"


class Row:
    """A result row, readable by column name or by position (as sqlite3.Row is)."""

    __slots__ = ("_values", "_index")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        return self._values[self._index[key]] if isinstance(key, str) else self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._index)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self._values))})"


def row_maker(cursor: psycopg.Cursor[Any] | psycopg.AsyncCursor[Any]) -> Callable[[Sequence[Any]], Row]:
    """psycopg's row factory for Row."""
    index = {column.name: n for n, column in enumerate(cursor.description or ())}
    return lambda values: Row(values, index)


class _FlagDumper(Dumper):
    """Python bools as 0/1 integers: the schema keeps SQLite's integer flags, so both engines store the same."""

    format = Format.TEXT
    oid = psycopg.adapters.types["int8"].oid

    def dump(self, obj: bool) -> bytes:
        return b"1" if obj else b"0"


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[Row]:
    connection = psycopg.connect(url, autocommit=autocommit, row_factory=row_maker)  # type: ignore[arg-type]
    configure(connection)
    return connection


def configure(connection: psycopg.Connection[Any]) -> None:
    """What every connection of the engine needs, also those a pool opens."""
    connection.adapters.register_dumper(bool, _FlagDumper)
    connection.row_factory = row_maker  # type: ignore[assignment]
    # pgvector's HNSW walk stops at hnsw.ef_search (40) candidates, and a filter (a task, an as_of time)
    # then keeps only those that match: within one of 7 RealMem personas, 2 of 20; none when other tasks
    # hold every near entry. An iterative scan walks on until the k asked for match (pgvector 0.8;
    # bounded by hnsw.max_scan_tuples). Relaxed order: memory_index.nearest sorts the k itself, and
    # strict order took 2-4 times as long for the same RealMem recall. Set before the extension loads,
    # an older pgvector that lacks it only warns.
    connection.execute("SET hnsw.iterative_scan = relaxed_order")
    if not connection.autocommit:
        connection.commit()


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every PostgreSQL migration shipped with the server, in order."""
    return migration_files("taskmem.store.postgres.migrations")


def migrate(connection: psycopg.Connection[Any]) -> list[str]:
    """Apply the migrations the database has not seen yet, each in its own transaction; replicas starting
    together wait for one another on an advisory lock. Returns the names applied. A database that records a
    migration this code does not ship is refused (SchemaTooNew) before anything is written."""
    applied = []
    shipped = migrations()
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        if connection.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is not None:
            check_not_newer(recorded_of(connection.execute(RECORDED_SQL)), shipped)
        connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations"
                           " (number BIGINT PRIMARY KEY, name TEXT NOT NULL)")
    for number, name, sql in shipped:
        with connection.transaction():
            connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            if connection.execute("SELECT 1 FROM schema_migrations WHERE number = %s", (number,)).fetchone():
                continue
            log.info("applying migration %s", name)
            connection.execute(sql.encode())  # the whole file: psycopg sends it as one simple query
            connection.execute("INSERT INTO schema_migrations (number, name) VALUES (%s, %s)", (number, name))
            applied.append(name)
    return applied
