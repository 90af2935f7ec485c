"""SQLite's numbered migrations: which ones a database file still needs."""

import sqlite3
from pathlib import Path

import pytest

from taskmem.store.sqlite import connection as sqlite_connection


def test_a_migration_numbered_below_one_already_applied_is_still_applied(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Branches merged in any order can land a lower number after a higher one has run on a database.
    database = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    shipped = sqlite_connection.migrations()
    assert sqlite_connection.migrate(database) == [name for _, name, _ in shipped]
    numbers = {number for number, _, _ in shipped}
    late = min(n for n in range(1, max(numbers)) if n not in numbers)
    landed_later = (late, f"{late:04d}_landed_later.sql", "CREATE TABLE landed_later (x INTEGER)")
    monkeypatch.setattr(sqlite_connection, "migrations", lambda: sorted([*shipped, landed_later]))
    assert sqlite_connection.migrate(database) == [landed_later[1]]
    assert sqlite_connection.migrate(database) == []
    database.execute("SELECT x FROM landed_later")
