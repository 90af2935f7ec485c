"""Event cursors are one sequence over all namespaces (issue 27, point 7, documented in docs/api.md): a
namespace sees gaps where other namespaces wrote, and nothing else of theirs."""

from __future__ import annotations

from pathlib import Path

import grpc

from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess


async def test_a_namespace_sees_the_gaps_other_namespaces_leave_in_the_cursors_but_not_their_events(
        tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "taskmem.db", env={"TASKMEM_API_KEYS": "a-key:alpha;b-key:beta"})
    alpha, beta = [("authorization", "Bearer a-key")], [("authorization", "Bearer b-key")]
    try:
        async with grpc.aio.insecure_channel(server.start()) as channel:
            tasks = TaskServiceStub(channel)
            first = (await tasks.CreateTask(pb.CreateTaskRequest(name="alpha 1"), metadata=alpha)).task
            for n in range(5):
                await tasks.CreateTask(pb.CreateTaskRequest(name=f"beta {n}"), metadata=beta)
            second = (await tasks.CreateTask(pb.CreateTaskRequest(name="alpha 2"), metadata=alpha)).task
            seen = [(await tasks.ListEvents(pb.ListEventsRequest(task_ids=[task.id]), metadata=alpha)).events
                    for task in (first, second)]
    finally:
        server.stop()
    cursors = [events[0].cursor for events in seen]
    assert cursors[1] - cursors[0] == 6  # beta's five task creations lie between: their number shows ...
    assert all(event.task_id in (first.id, second.id) for events in seen for event in events)  # ... nothing else
