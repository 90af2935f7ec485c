"""`taskmem migrate` brings a database (SQLite file, or PostgreSQL with --engine postgres) up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess


def migrate(database: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskmem", "migrate", "--database", database],
                          capture_output=True, text=True, timeout=120)


async def test_migrate_applies_every_migration_once_and_a_server_then_starts_on_the_database(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db")
    first = migrate(server.database_setting)
    assert first.returncode == 0, first.stderr
    assert "applied 0001_" in first.stdout and "schema up to date" in first.stdout
    again = migrate(server.database_setting)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == "schema up to date (0 migrations applied)"
    address = server.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            created = await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="after migrate"))
            assert created.task.name == "after migrate"
    finally:
        server.stop()
