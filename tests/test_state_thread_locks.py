"""StateEngine keeps a per-thread lock only while a reconciliation holds or waits for it: a server that
has seen many threads holds none once they are quiet (before, one asyncio.Lock per thread stayed forever).

The server runs in this process (as `taskmem mcp` embeds it) so the test can look at the engine's map."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from taskmem.config import Config
from taskmem.server import TaskmemServer
from taskmem.v1 import state_pb2, task_pb2
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess

DECISION, ACTION = state_pb2.STATE_ITEM_TYPE_DECISION, state_pb2.STATE_ITEM_TYPE_ACTION


@pytest.fixture
async def in_process(tmp_path: Path) -> AsyncIterator[tuple[TaskmemServer, grpc.aio.Channel]]:
    database = ServerProcess(tmp_path / "taskmem.db").database_setting  # SQLite, or PostgreSQL with --engine
    # 100 calls at once on purpose: room for all of them (admission would refuse past 64 by default).
    server = TaskmemServer(dataclasses.replace(Config(), database=database, listen="127.0.0.1:0",
                                               max_in_flight_calls=1000, max_loop_lag_ms=60000.0))
    address = await server.start()
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            yield server, channel
    finally:
        await server.stop()


async def test_no_thread_lock_outlives_the_reconciliations_of_many_threads(
        in_process: tuple[TaskmemServer, grpc.aio.Channel]) -> None:
    server, channel = in_process
    tasks, state = TaskServiceStub(channel), StateServiceStub(channel)
    assert server.state is not None
    task_ids = [(await tasks.CreateTask(tpb.CreateTaskRequest(name=f"task {n}"))).task.id for n in range(10)]

    async def standalone_thread(n: int) -> None:
        thread_id = f"chat-{n}"
        await tasks.PostMessage(tpb.PostMessageRequest(thread_id=thread_id, role=task_pb2.MESSAGE_ROLE_USER,
                                                       content=f"plan for chat {n}"))
        await state.UpsertStateItems(spb.UpsertStateItemsRequest(thread_id=thread_id, items=[
            state_pb2.StateItemCandidate(type=ACTION, text=f"Write the report for chat {n}")]))

    async def task_thread(task_id: str, n: int) -> None:
        await state.AddDecision(spb.AddDecisionRequest(task_id=task_id, text=f"Use plan {n % 3}"))

    # Several calls on one thread at once queue on its lock; many threads run side by side.
    await asyncio.gather(*(standalone_thread(n) for n in range(60)),
                         *(task_thread(task_ids[n % 10], n) for n in range(40)))
    assert len(server.state.thread_locks) == 0
    # And every call was reconciled.
    listed = await state.ListStateItems(spb.ListStateItemsRequest(thread_id="chat-59"))
    assert [i.text for i in listed.items] == ["Write the report for chat 59"]
    listed = await state.ListStateItems(spb.ListStateItemsRequest(task_id=task_ids[0], include_superseded=True))
    assert sorted(i.text for i in listed.items) == ["Use plan 0", "Use plan 1", "Use plan 2"]
    # A thread used again later gets a lock again, and gives it back.
    await standalone_thread(0)
    assert len(server.state.thread_locks) == 0
