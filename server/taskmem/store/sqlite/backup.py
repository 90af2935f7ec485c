"""Backups of an SQLite database while a server writes it: SQLite's online backup API, then a check.

The copy is made in one step of sqlite3_backup (pages=-1), which reads the whole source inside one read
transaction: in WAL mode that is a snapshot of every commit before it (every write a server has acknowledged,
since a write is acknowledged only once committed) that the server's writer never waits on. The copy is then
switched to a rollback journal, so it is one self-contained file (a server started on it turns WAL on again).
"""

from __future__ import annotations

import os
from pathlib import Path

import sqlean as sqlite3

from taskmem.store.backup_report import BackupRefused, BackupReport
from taskmem.store.migration_files import RECORDED_SQL, recorded_of
from taskmem.store.sqlite.connection import migrations


def backup_file(source: str, destination: str) -> BackupReport:
    """Copy the database at source into a new file at destination, consistently, then verify the copy."""
    if not Path(source).is_file():
        raise BackupRefused(f"{source} is not an SQLite database file")
    target = Path(destination)
    if target.exists():
        raise BackupRefused(f"{destination} exists already: a backup never overwrites a file")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    opened = sqlite3.connect(source, isolation_level=None)  # changes nothing: no journal-mode switch
    opened.execute("PRAGMA busy_timeout=10000")
    try:
        copy = sqlite3.connect(str(partial), isolation_level=None)
        try:
            opened.backup(copy, pages=-1)
            copy.execute("PRAGMA journal_mode=DELETE")
        finally:
            copy.close()
    finally:
        opened.close()
    _fsync(partial)
    os.replace(partial, target)  # a file at destination is always a whole backup
    return verify_file(destination)


def verify_file(path: str) -> BackupReport:
    """The integrity check and migration level of the SQLite database at path, changing nothing in it."""
    if not Path(path).is_file():
        raise BackupRefused(f"{path} is not a file")
    opened = sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, isolation_level=None)
    try:
        integrity = "; ".join(str(row[0]) for row in opened.execute("PRAGMA integrity_check"))
        tables = {row[0] for row in opened.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        recorded = recorded_of(opened.execute(RECORDED_SQL)) if "schema_migrations" in tables else {}
        tasks = opened.execute("SELECT count(*) FROM tasks").fetchone()[0] if "tasks" in tables else 0
        cursor = opened.execute("SELECT coalesce(max(cursor), 0) FROM events").fetchone()[0] if "events" in tables else 0
    except sqlite3.DatabaseError as error:
        integrity = f"not a readable SQLite database ({error})"
        recorded, tasks, cursor = {}, 0, 0
    finally:
        opened.close()
    return BackupReport(integrity, recorded, migrations(), int(tasks), int(cursor))


def restore_file(backup: str, database: str) -> BackupReport:
    """Put a verified backup in place as the database a server will open; never over an existing database."""
    report = verify_file(backup)
    if not report.sound:
        raise BackupRefused(f"{backup} is not a sound backup for this taskmem: " + "; ".join(report.lines()))
    target = Path(database)
    if target.exists():
        raise BackupRefused(f"{database} exists already: stop its server and move it away first (restore never "
                            "overwrites a database)")
    target.parent.mkdir(parents=True, exist_ok=True)
    for stale in (Path(database + "-wal"), Path(database + "-shm")):
        stale.unlink(missing_ok=True)  # another database's journal must never be replayed into the restore
    backup_file(backup, database)
    return report


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
