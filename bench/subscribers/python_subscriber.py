"""Events-bench subscriber on the Python client (taskmem_client).

    python_subscriber.py ADDRESS TASK_ID AFTER_CURSOR

Follows the task's MESSAGE_POSTED events. Each message's content is the writer's send time
(ns since the epoch), or "ready"/"end". Prints "ready" when the ready message arrives; on "end"
prints one line per timed event, "SEND_NS APPEND_NS RECV_NS" (APPEND_NS: the event's create_time,
stamped by the server's writer in the transaction that appends it), and exits.
"""

from __future__ import annotations

import asyncio
import sys
import time

from taskmem.v1 import event_pb2
from taskmem_client import TaskmemClient


async def main(address: str, task_id: str, after_cursor: int) -> None:
    received: list[tuple[int, int, int]] = []
    async with TaskmemClient(address) as client:
        async for event in client.subscribe(task_ids=[task_id], types=[event_pb2.EVENT_TYPE_MESSAGE_POSTED],
                                            after_cursor=after_cursor):
            now = time.time_ns()
            content = event.payload.fields["content"].string_value
            if content == "ready":
                print("ready", flush=True)
            elif content == "end":
                break
            else:
                received.append((int(content), event.create_time.ToNanoseconds(), now))
    sys.stdout.write("".join(f"{sent} {appended} {got}\n" for sent, appended, got in received))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
