"""`taskmem backup DEST`, `taskmem restore BACKUP`, `taskmem verify BACKUP`: consistent copies of a live database.

backup copies the database a server is serving (SQLite: the online backup API; PostgreSQL: pg_dump) into a new
file and checks the copy; restore puts a checked backup in place of a database that does not exist yet (or,
PostgreSQL, is empty); verify checks a backup's integrity and migration level against this release. Exit codes:
0 sound, 1 the copy is damaged or newer than this release, 2 the command was refused (the message says why).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from taskmem.config import ConfigError, config_from_serve_arguments
from taskmem.store.backup_report import BackupRefused, BackupReport
from taskmem.store.engines import is_postgres


def _database_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--config", help="YAML file of settings (or TASKMEM_CONFIG), as given to serve")
    parser.add_argument("--database", help=f"{what}: SQLite file or postgresql:// URL (default data/taskmem.db)")
    _pg_bin_argument(parser)


def _pg_bin_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pg-bin", default="", metavar="DIR",
                        help="PostgreSQL: the folder of pg_dump and pg_restore (default: PATH)")


def add_backup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("destination", metavar="DEST", help="the backup file to write (never overwritten)")
    _database_arguments(parser, "the database to copy, served or not")


def add_restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("backup", metavar="BACKUP", help="a file written by `taskmem backup`")
    _database_arguments(parser, "where to restore it: a file that does not exist, or an empty PostgreSQL database")


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("backup", metavar="BACKUP", help="a file written by `taskmem backup`")
    _pg_bin_argument(parser)


def _database(args: argparse.Namespace) -> str:
    return config_from_serve_arguments(args).database


def _print(report: BackupReport, out: TextIO) -> int:
    for line in report.lines():
        print(line, file=out)
    return 0 if report.sound else 1


def run_backup(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        database = _database(args)
        if is_postgres(database):
            from taskmem.store.postgres.backup import backup_url

            report = backup_url(database, args.destination, args.pg_bin)
        else:
            from taskmem.store.sqlite.backup import backup_file

            report = backup_file(database, args.destination)
    except (ConfigError, BackupRefused) as error:
        print(f"taskmem backup: {error}", file=err)
        return 2
    print(f"backup written to {args.destination}", file=out)
    return _print(report, out)


def run_restore(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        database = _database(args)
        if is_postgres(database):
            from taskmem.store.postgres.backup import restore_url

            report = restore_url(args.backup, database, args.pg_bin)
        else:
            from taskmem.store.sqlite.backup import restore_file

            report = restore_file(args.backup, database)
    except (ConfigError, BackupRefused) as error:
        print(f"taskmem restore: {error}", file=err)
        return 2
    print(f"restored {args.backup} into {database}; start the server on it", file=out)
    return _print(report, out)


def run_verify(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        with open(args.backup, "rb") as opened:
            magic = opened.read(5)
        if magic == b"PGDMP":
            from taskmem.store.postgres.backup import verify_archive

            report = verify_archive(args.backup, args.pg_bin)
        else:
            from taskmem.store.sqlite.backup import verify_file

            report = verify_file(args.backup)
    except (OSError, BackupRefused) as error:
        print(f"taskmem verify: {error}", file=err)
        return 2
    print(f"{Path(args.backup).name}:", file=out)
    return _print(report, out)
