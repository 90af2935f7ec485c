"""Opening the SQLite file: WAL mode, sqlite-vec loaded, numbered migrations applied."""

from __future__ import annotations

import importlib.resources
import logging
import re
from pathlib import Path

import aiosqlite
import sqlean as sqlite3  # a DB-API SQLite with extension loading and FTS5
import sqlite_vec

log = logging.getLogger(__name__)

_MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


def _connector(path: str, synchronous: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.enable_load_extension(True)
    sqlite_vec.load(connection)
    connection.enable_load_extension(False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(f"PRAGMA synchronous={synchronous}")
    connection.execute("PRAGMA busy_timeout=10000")
    connection.execute("PRAGMA foreign_keys=ON")
    return connection


async def open_connection(path: str, synchronous: str = "FULL") -> aiosqlite.Connection:
    """An aiosqlite connection in autocommit mode; transactions are explicit."""
    connection = aiosqlite.Connection(lambda: _connector(path, synchronous), iter_chunk_size=64)
    return await connection


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every migration shipped with the server, in order."""
    found = []
    for entry in importlib.resources.files("taskmem.store.migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text()))
    return sorted(found)


async def migrate(connection: aiosqlite.Connection) -> None:
    """Apply, each in its own transaction, the migrations the file has not seen yet."""
    await connection.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL)"
    )
    async with connection.execute("SELECT coalesce(max(number), 0) FROM schema_migrations") as cursor:
        row = await cursor.fetchone()
    current = row[0] if row else 0
    for number, name, sql in migrations():
        if number <= current:
            continue
        log.info("applying migration %s", name)
        await connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                await connection.execute(statement)
            await connection.execute("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", (number, name))
            await connection.execute("COMMIT")
        except BaseException:
            await connection.execute("ROLLBACK")
            raise


def _statements(sql: str) -> list[str]:
    without_comments = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [statement.strip() for statement in without_comments.split(";") if statement.strip()]


def ensure_parent(path: str) -> None:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
