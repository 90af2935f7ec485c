"""Backups of a PostgreSQL database while replicas write it: pg_dump's custom-format archive, then a check.

pg_dump reads the whole database in one REPEATABLE READ snapshot, so the archive holds every transaction
committed before it started (every write a replica has acknowledged) and none half; it takes no lock that
stops writers. Events and their cursor counter (event_cursor) are in the same snapshot, so a server on the
restored database goes on from the archive's last cursor with no hole. The programs come from --pg-bin, or
PATH; they must be of the server's major version or newer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import psycopg

from taskmem.store.backup_report import BackupRefused, BackupReport
from taskmem.store.migration_files import recorded_of
from taskmem.store.postgres.connection import migrations

ARCHIVE_MAGIC = b"PGDMP"


def _program(name: str, pg_bin: str) -> str:
    found = shutil.which(name, path=pg_bin) if pg_bin else shutil.which(name)
    if found is None:
        raise BackupRefused(f"{name} not found {'in ' + pg_bin if pg_bin else 'on PATH'}: install the PostgreSQL "
                            "client programs (of the server's major version) or name their folder with --pg-bin")
    return found


def _run(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BackupRefused(f"{Path(command[0]).name} failed: {done.stderr.strip()}")
    return done.stdout


def backup_url(url: str, destination: str, pg_bin: str = "") -> BackupReport:
    target = Path(destination)
    if target.exists():
        raise BackupRefused(f"{destination} exists already: a backup never overwrites a file")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    _run([_program("pg_dump", pg_bin), "--format=custom", "--no-owner", "--no-privileges", f"--file={partial}",
          f"--dbname={url}"])
    os.replace(partial, target)
    return verify_archive(destination, pg_bin)


def _table_rows(archive: str, table: str, pg_restore: str) -> list[list[str]]:
    """The rows of one table in the archive, as COPY text fields."""
    text = _run([pg_restore, "--data-only", f"--table={table}", "--file=-", archive])
    rows, copying = [], False
    for line in text.splitlines():
        if line.startswith("COPY "):
            copying = True
        elif line == "\\.":
            copying = False
        elif copying:
            rows.append(line.split("\t"))
    return rows


def verify_archive(path: str, pg_bin: str = "") -> BackupReport:
    """Read every block of the archive (pg_restore to nowhere), then its migrations, tasks and event cursor."""
    if not Path(path).is_file():
        raise BackupRefused(f"{path} is not a file")
    pg_restore = _program("pg_restore", pg_bin)
    try:
        _run([pg_restore, "--file=/dev/null", path])
        integrity = "ok"
    except BackupRefused as error:
        return BackupReport(f"not a readable pg_dump archive ({error})", {}, migrations(), 0, 0)
    recorded = recorded_of((row[0], row[1]) for row in _table_rows(path, "schema_migrations", pg_restore))
    tasks = len(_table_rows(path, "tasks", pg_restore))
    cursors = _table_rows(path, "event_cursor", pg_restore)
    last_cursor = int(cursors[0][1]) if cursors else 0
    return BackupReport(integrity, recorded, migrations(), tasks, last_cursor)


def restore_url(archive: str, url: str, pg_bin: str = "") -> BackupReport:
    """Load a verified archive into an empty database (create it first); never into one that has tables."""
    report = verify_archive(archive, pg_bin)
    if not report.sound:
        raise BackupRefused(f"{archive} is not a sound backup for this taskmem: " + "; ".join(report.lines()))
    with psycopg.connect(url, autocommit=True) as connection:
        found = connection.execute("SELECT to_regclass('schema_migrations')").fetchone()
    if found is not None and found[0] is not None:
        raise BackupRefused("the database already holds a taskmem schema: restore only into an empty database "
                            "(CREATE DATABASE …), then point the servers at it")
    _run([_program("pg_restore", pg_bin), "--no-owner", "--no-privileges", "--exit-on-error", f"--dbname={url}",
          archive])
    return report
