"""A database migrated by a newer release than the server: refused at start with both schema versions named and
nothing changed; and a running server (an older replica during a rolling upgrade) steps aside when a newer one
migrates the database under it."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from taskmem.store.sqlite.connection import migrations
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support import server_process
from tests.support.server_process import ServerProcess

FUTURE = (9999, "9999_from_a_newer_release.sql")
START_SECONDS = 120.0


def _newest_shipped() -> str:
    if server_process.ENGINE == "postgres":
        from taskmem.store.postgres.connection import migrations as postgres_migrations

        return postgres_migrations()[-1][1]
    return migrations()[-1][1]


def _files_digest(database: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(database.parent.glob(database.name + "*"))}


def _snapshot(server: ServerProcess) -> tuple[object, ...]:
    return (server.sql("SELECT number, name FROM schema_migrations ORDER BY number"),
            server.sql("SELECT id, name, updated_at FROM tasks ORDER BY id"),
            server.sql("SELECT max(cursor) FROM events"),
            _files_digest(server.database) if server_process.ENGINE == "sqlite" else None)


async def _serve_one_task(server: ServerProcess) -> None:
    server.start(timeout=START_SECONDS)
    async with grpc.aio.insecure_channel(server.address) as channel:
        await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="written by this release"))
    server.stop()


async def test_a_server_refuses_a_database_a_newer_release_migrated_naming_both_versions_and_changes_nothing(
        tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db")
    await _serve_one_task(server)
    server.sql("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", FUTURE)
    if server_process.ENGINE == "sqlite":
        server.sql("PRAGMA journal_mode=DELETE")  # as a backup is: a server that opened it in WAL would rewrite it
    before = _snapshot(server)

    with pytest.raises(RuntimeError) as refused:
        server.start(timeout=START_SECONDS)
    assert server.process is not None and server.process.returncode == 3
    said = str(refused.value)
    assert "refusing to serve: the database's schema is newer than this taskmem" in said
    assert f"the database is at migration {FUTURE[1]}, this taskmem's schema goes up to {_newest_shipped()}" in said
    assert "changed nothing" in said
    assert _snapshot(server) == before

    migrate = subprocess.run([sys.executable, "-m", "taskmem", "migrate", "--database", server.database_setting],
                             capture_output=True, text=True, timeout=120)
    assert migrate.returncode == 3 and FUTURE[1] in migrate.stderr, migrate
    assert _snapshot(server) == before


async def test_a_running_server_steps_aside_when_a_newer_release_migrates_its_database(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env={"TASKMEM_SCHEMA_CHECK_INTERVAL_SECONDS": "0.2"})
    server.start(timeout=START_SECONDS)
    assert server.process is not None
    try:
        server.sql("INSERT INTO schema_migrations (number, name) VALUES (?, ?)", FUTURE)
        assert server.process.wait(timeout=60) == 3
    finally:
        server.stop()
    said = "".join(server.output)
    assert "stepping aside: the database's schema is newer than this taskmem" in said
    assert FUTURE[1] in said and _newest_shipped() in said
