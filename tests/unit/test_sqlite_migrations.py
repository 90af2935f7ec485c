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


def test_state_item_links_survive_0025_and_one_entry_may_then_link_an_item_in_each_thread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = sqlite3.connect(tmp_path / "t.db", isolation_level=None)
    shipped = sqlite_connection.migrations()
    monkeypatch.setattr(sqlite_connection, "migrations", lambda: [m for m in shipped if m[0] < 25])
    sqlite_connection.migrate(database)
    link = "INSERT INTO state_item_entries (namespace, thread_id, uid, memory_entry_id, kind, created_at)" \
           " VALUES ('default', ?, 'd-1', 'mem_1', 'decision', 1)"
    database.execute(link, ("tsk_original",))
    monkeypatch.setattr(sqlite_connection, "migrations", lambda: shipped)
    assert "0025_task_forks.sql" in sqlite_connection.migrate(database)
    database.execute(link, ("tsk_fork",))  # a fork's copy of the link
    rows = database.execute("SELECT thread_id FROM state_item_entries ORDER BY thread_id").fetchall()
    assert rows == [("tsk_fork",), ("tsk_original",)]
    with pytest.raises(sqlite3.IntegrityError):
        database.execute(link, ("tsk_fork",))
