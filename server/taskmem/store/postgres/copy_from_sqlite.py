"""Copying an SQLite database into an empty PostgreSQL one, with nothing lost.

Every table the PostgreSQL schema shares with the file is copied row for row in one transaction
(COPY), columns by name: events keep their cursors, entries their seqs, vectors their float32
values (never recomputed). Afterwards the identity sequences and event_cursor continue after the
copied rows. Each table is then read back from PostgreSQL and compared with the file: its row count
and a checksum (an order-free sum of per-row SHA-256 digests over values in one canonical form).
The SQLite-only indexes (FTS5's memory_fts, vec0's memory_vectors) are not copied: PostgreSQL's
tsvector column fills itself and the server builds the HNSW index at start.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import psycopg

from taskmem.store.postgres.connection import connect, migrate
from taskmem.store.sqlite import connection as sqlite

BATCH = 2000
# Bookkeeping of each engine, not data: the migrations applied, the cursor counter (set from events).
_NOT_COPIED = {"schema_migrations", "event_cursor"}
# Tables other tables reference, copied before them.
_FIRST = ["tasks", "memory_entries"]
_VECTOR_COLUMNS = {("memory_embeddings", "embedding")}
_MASK = (1 << 64) - 1

Progress = Callable[[int, int], None]


class DestinationNotEmpty(Exception):
    """The PostgreSQL database already holds tasks or events; copy only into a new one."""


@dataclasses.dataclass
class TableCopy:
    table: str
    source_rows: int
    copied_rows: int
    source_checksum: str
    copied_checksum: str

    @property
    def matches(self) -> bool:
        return self.source_rows == self.copied_rows and self.source_checksum == self.copied_checksum


def _canonical(value: Any) -> str:
    """One form for a value read from either engine (SQLite may hold 1 where PostgreSQL gives 1.0)."""
    if value is None:
        return "null"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "x" + bytes(value).hex()
    if isinstance(value, (int, float)):
        number = float(value)
        return str(int(number)) if number.is_integer() and abs(number) < 2**53 else repr(number)
    return "s" + str(value)


class _Checksum:
    def __init__(self) -> None:
        self.total = 0
        self.rows = 0

    def add(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            digest = hashlib.sha256("\x1f".join(_canonical(v) for v in row).encode()).digest()
            self.total = (self.total + int.from_bytes(digest[:8], "big")) & _MASK
            self.rows += 1

    @property
    def hex(self) -> str:
        return f"{self.total:016x}"


def _vector_text(blob: bytes) -> str:
    return "[" + ",".join(repr(float(x)) for x in np.frombuffer(blob, dtype=np.float32)) + "]"


def _vector_blob(text: str) -> bytes:
    return np.array([float(x) for x in text.strip("[]").split(",") if x], dtype=np.float32).tobytes()


def _tables(destination: psycopg.Connection[Any], source: Any) -> list[tuple[str, list[str]]]:
    """(table, columns both engines have, generated ones left out), referenced tables first."""
    source_tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    rows = destination.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND is_generated = 'NEVER' ORDER BY table_name, ordinal_position").fetchall()
    columns: dict[str, list[str]] = {}
    for table, column in rows:
        columns.setdefault(table, []).append(column)
    found = []
    for table in sorted(columns, key=lambda t: (t not in _FIRST, _FIRST.index(t) if t in _FIRST else 0, t)):
        if table in _NOT_COPIED or table not in source_tables:
            continue
        have = {row[1] for row in source.execute(f"PRAGMA table_info({table})")}
        found.append((table, [c for c in columns[table] if c in have]))
    return found


def copy_database(source_path: str, url: str, progress: Progress) -> list[TableCopy]:
    """Copy the SQLite file into the (migrated, empty) PostgreSQL database; the per-table report."""
    source = sqlite.connect(source_path)
    try:
        sqlite.migrate(source)  # the file's schema is brought to the current one first, as a server would
        with connect(url) as destination:
            migrate(destination)
            if destination.execute("SELECT (SELECT count(*) FROM tasks) + (SELECT count(*) FROM events)").fetchone()[0]:
                raise DestinationNotEmpty("the PostgreSQL database already holds tasks or events; copy into a new one")
            tables = _tables(destination, source)
            counts = {table: int(source.execute(f"SELECT count(*) FROM {table}").fetchone()[0]) for table, _ in tables}
            total, done = sum(counts.values()), 0
            progress(done, total)
            sums: dict[str, _Checksum] = {}
            with destination.transaction():
                for table, columns in tables:
                    sums[table] = checksum = _Checksum()
                    vectors = [n for n, c in enumerate(columns) if (table, c) in _VECTOR_COLUMNS]
                    cursor = source.execute(f"SELECT {', '.join(columns)} FROM {table}")
                    with destination.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
                        while batch := cursor.fetchmany(BATCH):
                            checksum.add(batch)
                            for row in batch:
                                values = list(row)
                                for n in vectors:
                                    values[n] = _vector_text(values[n])
                                copy.write_row(values)
                            done += len(batch)
                            progress(done, total)
                _continue_counters(destination)
            return [_verify(destination, table, columns, sums[table]) for table, columns in tables]
    finally:
        source.close()


def _continue_counters(destination: psycopg.Connection[Any]) -> None:
    """New rows after a copy take the seqs and cursors after the copied ones."""
    identities = destination.execute(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND is_identity = 'YES'").fetchall()
    for table, column in identities:
        destination.execute(f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                            f" coalesce(max({column}), 1), max({column}) IS NOT NULL) FROM {table}")
    destination.execute("UPDATE event_cursor SET last = (SELECT coalesce(max(cursor), 0) FROM events)")


def _verify(destination: psycopg.Connection[Any], table: str, columns: list[str], source: _Checksum) -> TableCopy:
    copied = _Checksum()
    vectors = [n for n, c in enumerate(columns) if (table, c) in _VECTOR_COLUMNS]
    selected = ", ".join(f"{c}::text" if (table, c) in _VECTOR_COLUMNS else c for c in columns)
    with destination.transaction(), destination.cursor(name=f"verify_{table}") as cursor:
        cursor.execute(f"SELECT {selected} FROM {table}")
        while batch := cursor.fetchmany(BATCH):
            rows = [list(row) for row in batch]
            for row in rows:
                for n in vectors:
                    row[n] = _vector_blob(row[n])
            copied.add(rows)
    return TableCopy(table, source.rows, copied.rows, source.hex, copied.hex)
