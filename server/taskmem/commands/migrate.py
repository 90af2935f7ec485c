"""`taskmem migrate`: bring a database's schema up to date without starting a server (before a rollout of
several replicas, or to check a PostgreSQL URL); servers also migrate at start."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from taskmem.config import ConfigError, config_from_serve_arguments
from taskmem.store.engines import apply_migrations
from taskmem.store.migration_files import SchemaTooNew


def add_migrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", help="YAML file of settings (or TASKMEM_CONFIG), as given to serve")
    parser.add_argument("--database", help="SQLite file or postgresql:// URL (default data/taskmem.db)")


def run_migrate(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        database = config_from_serve_arguments(args).database
    except ConfigError as error:
        print(f"taskmem migrate: {error}", file=err)
        return 2
    try:
        applied = apply_migrations(database)
    except SchemaTooNew as error:
        print(f"taskmem migrate: {error}", file=err)
        return 3
    for name in applied:
        print(f"applied {name}", file=out)
    print(f"schema up to date ({len(applied)} migrations applied)", file=out)
    return 0
