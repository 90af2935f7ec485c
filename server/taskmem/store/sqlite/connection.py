"""Opening the SQLite file: WAL mode, sqlite-vec loaded, numbered migrations applied."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import sqlean as sqlite3  # a DB-API SQLite with extension loading and FTS5
import sqlite_vec

from taskmem.store.migration_files import RECORDED_SQL, check_not_newer, migration_files, recorded_of

log = logging.getLogger(__name__)


def connect(path: str, synchronous: str = "FULL") -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), rows readable by column name."""
    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    connection.enable_load_extension(True)
    sqlite_vec.load(connection)
    connection.enable_load_extension(False)
    connection.row_factory = sqlite3.Row
    refuse_newer_schema(connection)  # before the switch to WAL, which would rewrite the file's header
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute(f"PRAGMA synchronous={synchronous}")
    connection.execute("PRAGMA busy_timeout=10000")
    return connection


def refuse_newer_schema(connection: sqlite3.Connection) -> None:
    """SchemaTooNew, before anything is written, for a file that records a migration this code does not ship."""
    if connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").fetchone():
        check_not_newer(recorded_of(connection.execute(RECORDED_SQL)), migrations())


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every SQLite migration shipped with the server, in order."""
    return migration_files("taskmem.store.migrations")


def migrate(connection: sqlite3.Connection) -> list[str]:
    """Apply, each in its own transaction and in order, the migrations the file has not seen yet (every number
    not recorded, as PostgreSQL does: numbers are handed to branches, so one can land after a higher one
    already ran); returns their names. A database that records a migration this code does not ship is refused
    (SchemaTooNew) before anything is written."""
    applied = []
    shipped = migrations()
    refuse_newer_schema(connection)
    connection.execute("CREATE TABLE IF NOT EXISTS schema_migrations (number INTEGER PRIMARY KEY, name TEXT NOT NULL)")
    seen = {row[0] for row in connection.execute("SELECT number FROM schema_migrations")}
    for number, name, sql in shipped:
        if number in seen:
            continue
        log.info("applying migration %s", name)
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(sql):
                if not _adds_existing_column(connection, statement):
                    connection.execute(statement)
            connection.execute("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", (number, name))
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied


_ADD_COLUMN = re.compile(r"^ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)", re.IGNORECASE)


def _adds_existing_column(connection: sqlite3.Connection, statement: str) -> bool:
    """An ADD COLUMN whose column is there already: SQLite has no IF NOT EXISTS for it, and a migration can
    run again over its own work (one whose number was forgotten), as PostgreSQL's ADD COLUMN IF NOT EXISTS."""
    match = _ADD_COLUMN.match(statement)
    if match is None:
        return False
    table, column = match.groups()
    return any(row[1] == column for row in connection.execute(f"PRAGMA table_info({table})"))


def _statements(sql: str) -> list[str]:
    without_comments = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    return [statement.strip() for statement in without_comments.split(";") if statement.strip()]


def ensure_parent(path: str) -> None:
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
