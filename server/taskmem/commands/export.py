"""`taskmem export ID DIR`: reads one task's whole record from the server into an ExportDirectory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from taskmem.commands.connection import TaskClient
from taskmem.commands.export_directory import ExportDirectory
from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb

PAGE_SIZE = 500
# How many action logs are read at once.
LOG_READ_CONCURRENCY = 16
# A running action's log never ends by itself; once no line has come for this long, the stored
# lines are taken to be all there is so far.
RUNNING_LOG_IDLE_SECONDS = 0.5


async def export_task(client: TaskClient, task_id: str, target: Path) -> Path:
    """Write the task as the directory target; returns it. Raises CommandError if target exists."""
    export = ExportDirectory(target)
    export.check_target_is_free()  # before any call, so the mistake costs nothing
    current = await client.stub.GetTask(pb.GetTaskRequest(task_id=task_id), **client.unary)
    with export:
        if current.HasField("plan"):
            for version in range(1, current.plan.version):
                older = await client.stub.GetPlan(pb.GetPlanRequest(task_id=task_id, version=version), **client.unary)
                export.write_plan(older.plan, current=False)
            export.write_plan(current.plan, current=True)
        async for actions in _pages(client.stub.ListActions, pb.ListActionsRequest(task_id=task_id), "actions", client):
            logs = await _read_logs(client, actions)
            for action, log_lines in zip(actions, logs, strict=True):
                export.append_action(action, log_lines)
        async for snapshots in _pages(client.stub.ListContextSnapshots,
                                      pb.ListContextSnapshotsRequest(task_id=task_id), "snapshots", client):
            for snapshot in snapshots:
                export.write_context_snapshot(snapshot)
        async for messages in _pages(client.stub.ListMessages, pb.ListMessagesRequest(task_id=task_id),
                                     "messages", client):
            for message in messages:
                export.append_message(message)
        # Read the task again last, so metadata.json is at least as new as everything above.
        latest = await client.stub.GetTask(pb.GetTaskRequest(task_id=task_id), **client.unary)
        return export.commit(latest.task)


async def _pages(method: Callable[..., Awaitable[Any]], request: Any, field: str,
                 client: TaskClient) -> AsyncIterator[list[Any]]:
    """Each page's items of an AIP-158 list, following next_page_token to the end."""
    request.page_size = PAGE_SIZE
    while True:
        page = await method(request, **client.unary)
        yield list(getattr(page, field))
        if not page.next_page_token:
            return
        request.page_token = page.next_page_token


async def _read_logs(client: TaskClient, actions: list[task_pb2.Action]) -> list[list[task_pb2.ActionLogLine] | None]:
    limit = asyncio.Semaphore(LOG_READ_CONCURRENCY)

    async def read(action: task_pb2.Action) -> list[task_pb2.ActionLogLine] | None:
        async with limit:
            return await read_action_log(client, action)

    return list(await asyncio.gather(*(read(action) for action in actions)))


async def read_action_log(client: TaskClient, action: task_pb2.Action) -> list[task_pb2.ActionLogLine]:
    """The action's stored log lines. A finished action's tail ends by itself; a running one's is cut
    after RUNNING_LOG_IDLE_SECONDS without a line."""
    call = client.stub.TailActionLog(pb.TailActionLogRequest(action_id=action.id), **client.stream)
    lines: list[task_pb2.ActionLogLine] = []
    running = action.status == task_pb2.ACTION_STATUS_RUNNING
    try:
        while True:
            read = call.read()
            response = await (asyncio.wait_for(read, RUNNING_LOG_IDLE_SECONDS) if running else read)
            if response is grpc.aio.EOF:
                return lines
            lines.append(response.line)
    except TimeoutError:
        return lines
    finally:
        call.cancel()
