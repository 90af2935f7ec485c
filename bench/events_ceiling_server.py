"""The events ceiling (bench/events_bench.py --ceiling): the least any grpc.aio server must do per message.

A bare grpc.aio server answering the three calls the events bench makes — CreateTask, PostMessage and
SubscribeEvents — with nothing stored: each PostMessage is parsed, answered with its message, and turned
into one MESSAGE_POSTED event (cursor, task, content, create_time) serialized once and queued to every
live subscriber. No database, no guard, no filters. A rate and a latency this server does not reach on
the machine, taskmem (one Python process on grpc.aio) cannot reach either: the target is then a limit of
the process model, not of taskmem's code (issue 44, point 4).

    python bench/events_ceiling_server.py    # prints "ceiling on 127.0.0.1:PORT"
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from taskmem.v1 import event_pb2, task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402

TASK_ID = "task-ceiling"


class Ceiling:
    def __init__(self) -> None:
        self.cursor = 0
        self.subscribers: set[asyncio.Queue[bytes]] = set()

    async def create_task(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return pb.CreateTaskResponse(task=task_pb2.Task(id=TASK_ID)).SerializeToString()

    async def post_message(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        posted = pb.PostMessageRequest.FromString(request)
        self.cursor += 1
        message = task_pb2.Message(id=f"msg-{self.cursor}", task_id=posted.task_id, role=posted.role,
                                   content=posted.content)
        message.create_time.GetCurrentTime()
        event = event_pb2.Event(cursor=self.cursor, type=event_pb2.EVENT_TYPE_MESSAGE_POSTED,
                                task_id=posted.task_id, create_time=message.create_time)
        event.payload.update({"id": message.id, "content": posted.content})
        published = pb.SubscribeEventsResponse(event=event).SerializeToString()
        for queue in self.subscribers:
            queue.put_nowait(published)
        return pb.PostMessageResponse(message=message).SerializeToString()

    async def subscribe_events(self, request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.subscribers.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self.subscribers.discard(queue)


async def main() -> None:
    ceiling = Ceiling()
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("taskmem.v1.TaskService", {
        "CreateTask": grpc.unary_unary_rpc_method_handler(ceiling.create_task),
        "PostMessage": grpc.unary_unary_rpc_method_handler(ceiling.post_message),
        "SubscribeEvents": grpc.unary_stream_rpc_method_handler(ceiling.subscribe_events),
    }),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"ceiling on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()


if __name__ == "__main__":
    asyncio.run(main())
