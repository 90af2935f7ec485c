"""`taskmem copy --from FILE --to postgresql://…`: move an SQLite database to PostgreSQL, with a progress bar
and, per table, the row counts and checksums of both sides (exit 1 if any differ)."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from taskmem.commands.progress import ProgressBar


def add_copy_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--from", dest="source", required=True, metavar="FILE",
                        help="the SQLite database (stop its server first)")
    parser.add_argument("--to", dest="destination", required=True, metavar="URL",
                        help="an empty PostgreSQL database, postgresql://…")


def run_copy(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    from pathlib import Path

    from taskmem.store.engines import is_postgres

    if not is_postgres(args.destination):
        print("taskmem copy: --to must be a postgresql:// URL", file=err)
        return 2
    if not Path(args.source).is_file():
        print(f"taskmem copy: {args.source} is not an SQLite database file", file=err)
        return 2
    from taskmem.store.postgres.copy_from_sqlite import DestinationNotEmpty, copy_database

    bar = ProgressBar(err, "copy")
    try:
        report = copy_database(args.source, args.destination, bar)
    except DestinationNotEmpty as error:
        print(f"\ntaskmem copy: {error}", file=err)
        return 1
    bar.finish()
    print(f"{'table':28} {'rows (file)':>12} {'rows (copy)':>12}  {'checksum (file)':16}  {'checksum (copy)':16}",
          file=out)
    for table in report:
        print(f"{table.table:28} {table.source_rows:12} {table.copied_rows:12}  {table.source_checksum:16}"
              f"  {table.copied_checksum:16}{'' if table.matches else '  DIFFERS'}", file=out)
    differing = [table.table for table in report if not table.matches]
    if differing:
        print(f"taskmem copy: {len(differing)} tables differ: {', '.join(differing)}", file=err)
        return 1
    print(f"copied {sum(t.copied_rows for t in report)} rows in {len(report)} tables; every count and checksum"
          " matches", file=out)
    return 0
