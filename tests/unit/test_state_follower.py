"""The running summary's follower (state/follower.py): a message that makes a summary due always gets one, even
when it arrives while the check started by the message before it is still reading (proof run 1 of issue 45: the
fifth message's news came during the fourth's check, which had read four, so no summary was ever written)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from taskmem.core.events import Event, EventType
from taskmem.state.follower import StateFollower

EVERY = 5


def _posted(task_id: str) -> Event:
    return Event(namespace="default", type=EventType.MESSAGE_POSTED, task_id=task_id, correlation_id="",
                 payload={"id": "msg"}, created_at=0)


async def test_a_message_arriving_while_the_last_check_reads_still_gets_its_summary() -> None:
    follower = StateFollower(SimpleNamespace(  # type: ignore[arg-type]
        settings=SimpleNamespace(yaml_mirror_dir="", running_summary_every_messages=EVERY), chat=object()))
    posted, summarized, written = [4], [0], []
    reading = asyncio.Event()  # the check has read how many messages there are …
    finish = asyncio.Event()  # … and is still busy (a slow read, the model)

    async def summarize_if_due(namespace: str, thread_id: str) -> bool:
        seen = posted[0]
        reading.set()
        await finish.wait()
        if seen - summarized[0] < EVERY:
            return False
        summarized[0] = seen
        written.append(seen)
        return True

    follower.summarize_if_due = summarize_if_due  # type: ignore[method-assign]
    await follower._handle([_posted("tsk")])  # the fourth message: its check reads 4
    await reading.wait()
    posted[0] = 5
    await follower._handle([_posted("tsk")])  # the fifth, committed while that check is still busy
    finish.set()
    await asyncio.gather(*follower._summaries.values())
    assert written == [5]
