"""`taskmem events tail`: print stored events, or follow them live until stopped."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

import grpc

from taskmem.commands.connection import TaskClient
from taskmem.commands.formatting import event_line
from taskmem.v1 import event_pb2
from taskmem.v1 import task_service_pb2 as pb

PAGE_SIZE = 500
# RESOURCE_EXHAUSTED means this client read too slowly; the contract says to resume from the last
# cursor. Give up after this many resumptions in a row without receiving anything.
MAX_IDLE_RESUMES = 5


async def print_stored_events(client: TaskClient, out: TextIO, *, task_ids: Sequence[str],
                              types: Sequence[event_pb2.EventType.ValueType], after_cursor: int) -> None:
    """Every stored event after the cursor, in cursor order, page by page; then return."""
    page_token = ""
    while True:
        page = await client.stub.ListEvents(
            pb.ListEventsRequest(task_ids=task_ids, types=types, after_cursor=after_cursor,
                                 page_size=PAGE_SIZE, page_token=page_token), **client.unary)
        for event in page.events:
            print(event_line(event), file=out)
        page_token = page.next_page_token
        if not page_token:
            return


async def follow_events(client: TaskClient, out: TextIO, *, task_ids: Sequence[str],
                        types: Sequence[event_pb2.EventType.ValueType], after_cursor: int) -> None:
    """Replay the events after the cursor, then print new ones as they commit, until cancelled."""
    cursor, idle_resumes = after_cursor, 0
    while True:
        call = client.stub.SubscribeEvents(
            pb.SubscribeEventsRequest(task_ids=task_ids, types=types, after_cursor=cursor), **client.stream)
        try:
            async for response in call:
                print(event_line(response.event), file=out, flush=True)
                cursor, idle_resumes = response.event.cursor, 0
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or idle_resumes >= MAX_IDLE_RESUMES:
                raise
            idle_resumes += 1
            continue
        finally:
            call.cancel()
        return  # the server ended the stream cleanly
