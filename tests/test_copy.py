"""`taskmem copy` moves an SQLite database to PostgreSQL with nothing lost (whatever --engine says)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc

from taskmem.v1 import memory_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase

SUMMARIES = ["Postgres enforces the allowed values with a CHECK constraint", "The cache is warmed at start-up",
             "Deploys go out on Tuesdays", "Login uses short-lived tokens"]



async def record(address: str) -> tuple[str, list[str]]:
    async with grpc.aio.insecure_channel(address) as channel:
        tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
        plan = [task_pb2.PlanItemSpec(id=f"s{i}", title=f"step {i}") for i in range(3)]
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="moved", plan=plan))).task.id
        for n in range(5):
            await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary=f"action {n}"))
        await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_USER,
                                                      content="keep going"))
        entries = [mpb.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_DISCOVERY, summary=s,
                                      tags=["moved"]) for s in SUMMARIES]
        await memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=entries))
        await memory.SearchMemories(mpb.SearchMemoriesRequest(  # returns once every entry is embedded
            query="cache", mode=memory_pb2.SEARCH_MODE_SEMANTIC, wait_for_embeddings=True), timeout=60)
        events = (await tasks.ListEvents(pb.ListEventsRequest(page_size=500))).events
        return task_id, [f"{e.cursor}:{e.type}" for e in events]


async def test_copy_moves_every_row_keeps_cursors_and_vectors_and_a_server_carries_on(tmp_path: Path) -> None:
    source = tmp_path / "taskmem.db"
    on_sqlite = ServerOnDatabase(str(source))
    address = on_sqlite.start()
    try:
        task_id, events = await record(address)
    finally:
        on_sqlite.stop()
    url = database_url(str(tmp_path / "copied"))
    copied = subprocess.run([sys.executable, "-m", "taskmem", "copy", "--from", str(source), "--to", url],
                            capture_output=True, text=True, timeout=300)
    assert copied.returncode == 0, copied.stdout + copied.stderr
    assert "every count and checksum matches" in copied.stdout
    assert "copy [" in copied.stderr  # the progress bar
    rows = {line.split()[0]: int(line.split()[1]) for line in copied.stdout.splitlines()[1:-1]}
    assert rows["tasks"] == 1 and rows["actions"] == 5 and rows["memory_embeddings"] == len(SUMMARIES)
    assert rows["events"] == len(events)
    again = subprocess.run([sys.executable, "-m", "taskmem", "copy", "--from", str(source), "--to", url],
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 1 and "already holds tasks or events" in again.stderr

    on_postgres = ServerOnDatabase(url)
    address = on_postgres.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            listed = (await tasks.ListEvents(pb.ListEventsRequest(page_size=500))).events
            assert [f"{e.cursor}:{e.type}" for e in listed] == events
            found = await memory.SearchMemories(mpb.SearchMemoriesRequest(
                query="which database checks allowed values", mode=memory_pb2.SEARCH_MODE_SEMANTIC, limit=1,
                filter=memory_pb2.MemoryFilter(task_id=task_id)))
            assert found.unembedded_count == 0 and found.hits[0].entry.summary == SUMMARIES[0]
            action = await tasks.RecordAction(pb.RecordActionRequest(task_id=task_id, summary="after the move"))
            assert action.action.id
            after = (await tasks.ListEvents(pb.ListEventsRequest(after_cursor=int(events[-1].split(":")[0])))).events
            assert after and after[0].cursor == int(events[-1].split(":")[0]) + 1
    finally:
        on_postgres.stop()
