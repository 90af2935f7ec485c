"""`taskmem migrate` brings a database (SQLite file, or PostgreSQL with --engine postgres) up to date."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
from google.protobuf import duration_pb2

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support import server_process
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


async def test_migrating_to_secret_rotation_keeps_the_webhook_secret_which_then_rotates(tmp_path: Path) -> None:
    """SQLite's 0018 and PostgreSQL's 0007 add the replaced secret and the end of its overlap to a
    database that already has a secret."""
    server = ServerProcess(tmp_path / "taskmem.db")
    name = ("0007_webhook_secret_rotation.sql" if server_process.ENGINE == "postgres"
            else "0018_webhook_secret_rotation.sql")
    address = server.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            secret = (await TaskServiceStub(channel).GetWebhookSecret(pb.GetWebhookSecretRequest())).secret
    finally:
        server.stop()
    server.sql("ALTER TABLE webhook_secrets DROP COLUMN previous_secret")  # the table as it was before
    server.sql("ALTER TABLE webhook_secrets DROP COLUMN previous_until")
    # Forgotten from it on: SQLite applies what lies past its newest number (the later ones run again,
    # harmlessly), PostgreSQL each number it has not seen.
    server.sql("DELETE FROM schema_migrations WHERE number >= ?", (int(name[:4]),))
    migrated = migrate(server.database_setting)
    assert migrated.returncode == 0, migrated.stderr
    assert f"applied {name}" in migrated.stdout
    assert server.sql("SELECT secret, previous_secret, previous_until FROM webhook_secrets") == [(secret, "", 0)]
    address = server.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = TaskServiceStub(channel)
            assert (await stub.GetWebhookSecret(pb.GetWebhookSecretRequest())).secret == secret
            rotated = await stub.RotateWebhookSecret(pb.RotateWebhookSecretRequest(
                overlap=duration_pb2.Duration(seconds=60)))
        assert server.sql("SELECT secret, previous_secret, previous_until FROM webhook_secrets") == [
            (rotated.secret, secret, rotated.previous_secret_expire_time.ToMicroseconds())]
    finally:
        server.stop()


def test_a_migration_numbered_below_the_newest_applied_one_is_still_applied(tmp_path: Path) -> None:
    """Migration numbers are handed to branches, so one can land after a higher number already ran: a
    database migrated without SQLite's 0020 (PostgreSQL's 0009) gets it from the next migrate."""
    server = ServerProcess(tmp_path / "taskmem.db")
    assert migrate(server.database_setting).returncode == 0
    name = "0009_valid_time.sql" if server_process.ENGINE == "postgres" else "0020_valid_time.sql"
    server.sql("ALTER TABLE state_items DROP COLUMN valid_to")  # the database as a run without it left it
    server.sql("ALTER TABLE state_items DROP COLUMN prior_status")
    server.sql("ALTER TABLE knowledge DROP COLUMN valid_from")
    server.sql("DELETE FROM schema_migrations WHERE number = ?", (int(name[:4]),))
    assert server.sql("SELECT max(number) FROM schema_migrations")[0][0] > int(name[:4])
    migrated = migrate(server.database_setting)
    assert migrated.returncode == 0, migrated.stderr
    assert f"applied {name}" in migrated.stdout and "(1 migrations applied)" in migrated.stdout
    assert server.sql("SELECT count(*) FROM state_items WHERE valid_to IS NULL AND prior_status = ''") == [(0,)]
