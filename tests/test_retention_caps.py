"""Count caps end to end (issue 29, point 2), on either engine (`pytest --engine postgres`): a write that takes a
namespace past its memory_entries_max or messages_max expires the oldest items the cap applies to at once, in the
write's own transaction, so no read returns them from its commit on (no sweeper having run) and their events
read as tombstones; pinned items, decisions and the messages recording a task's course are neither counted nor
pushed out; maintenance then deletes what was pushed out like any expired item."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import event_pb2, memory_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as pb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess
from tests.support.eventually import eventually

DISCOVERY, DECISION = memory_pb2.MEMORY_TYPE_DISCOVERY, memory_pb2.MEMORY_TYPE_DECISION
ADDED, POSTED = event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED, event_pb2.EVENT_TYPE_MESSAGE_POSTED
USER, SYSTEM = task_pb2.MESSAGE_ROLE_USER, task_pb2.MESSAGE_ROLE_SYSTEM
ENTRIES_MAX, MESSAGES_MAX = 3, 2


def _server(folder: Path, **settings: str) -> ServerProcess:
    """A server whose namespace "default" keeps ENTRIES_MAX live entries and MESSAGES_MAX live messages."""
    env = {"TASKMEM_RETENTION": f"{{default: {{memory_entries_max: {ENTRIES_MAX}, messages_max: {MESSAGES_MAX}}}}}",
           "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0", "TASKMEM_EMBEDDING_BACKEND": "none", **settings}
    return ServerProcess(folder / "taskmem.db", env=env)


@pytest.fixture(scope="module")
def capped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """No maintenance: what reads leave out, they leave out alone. Every test writes more than a cap's worth
    of items, so whatever earlier tests left in the shared namespace is pushed out first."""
    process = _server(tmp_path_factory.mktemp("caps"))
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(capped_server: ServerProcess) -> AsyncIterator[tuple[TaskServiceStub, MemoryServiceStub,
                                                                    StateServiceStub]]:
    async with grpc.aio.insecure_channel(capped_server.address) as channel:
        yield TaskServiceStub(channel), MemoryServiceStub(channel), StateServiceStub(channel)


async def _task(tasks: TaskServiceStub) -> str:
    return (await tasks.CreateTask(tpb.CreateTaskRequest(name="Rotate the keys", goal="Rotate every key"))).task.id


async def _add(memory: MemoryServiceStub, *entries: pb.NewMemoryEntry) -> list[memory_pb2.MemoryEntry]:
    return list((await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=list(entries)))).entries)


def _note(task_id: str, n: int) -> pb.NewMemoryEntry:
    return pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary=f"vault note {n}")


async def _entries_seen(tasks: TaskServiceStub, memory: MemoryServiceStub, task_id: str) -> dict[str, set[str]]:
    """The entry ids the task's query, full-text search and event log (unexpired events) return."""
    f = memory_pb2.MemoryFilter(task_id=task_id)
    found = await memory.SearchMemories(pb.SearchMemoriesRequest(query="vault", mode=memory_pb2.SEARCH_MODE_FULLTEXT,
                                                                 filter=f, limit=50))
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[ADDED]))
    return {"query": {e.id for e in (await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(filter=f))).entries},
            "search": {hit.entry.id for hit in found.hits},
            "events": {e.payload["id"] for e in events.events if not e.expired}}


async def _tombstones(tasks: TaskServiceStub, task_id: str, event_type: int) -> dict[str, dict[str, str]]:
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[event_type]))
    return {e.payload["id"]: dict(e.payload) for e in events.events if e.expired}


async def test_a_write_past_the_cap_expires_the_oldest_entries_at_once_but_not_exempt_ones(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    first = (await _add(memory, _note(task_id, 0)))[0]
    decision = (await _add(memory, pb.NewMemoryEntry(task_id=task_id, type=DECISION, summary="vault decision")))[0]
    pinned = (await _add(memory, pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary="vault pin",
                                                   pinned=True)))[0]
    rest = [(await _add(memory, _note(task_id, n)))[0] for n in range(1, ENTRIES_MAX + 1)]

    kept = {decision.id, pinned.id, *(e.id for e in rest)}
    assert await _entries_seen(tasks, memory, task_id) == {"query": kept, "search": kept, "events": kept}
    assert await _tombstones(tasks, task_id, ADDED) == {first.id: {"id": first.id}}


async def test_entries_written_together_past_the_cap_leave_the_newest_and_say_so(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    stored = await _add(memory, *(_note(task_id, n) for n in range(ENTRIES_MAX + 2)))

    assert [e.HasField("expire_time") for e in stored] == [True, True] + [False] * ENTRIES_MAX
    kept = {e.id for e in stored[2:]}
    assert await _entries_seen(tasks, memory, task_id) == {"query": kept, "search": kept, "events": kept}
    assert set(await _tombstones(tasks, task_id, ADDED)) == {e.id for e in stored[:2]}


async def test_concurrent_writes_committed_in_one_batch_leave_exactly_the_cap(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    await asyncio.gather(*(_add(memory, _note(task_id, n)) for n in range(4 * ENTRIES_MAX)))

    seen = await _entries_seen(tasks, memory, task_id)
    assert len(seen["query"]) == ENTRIES_MAX
    assert seen == {"query": seen["query"], "search": seen["query"], "events": seen["query"]}
    assert len(await _tombstones(tasks, task_id, ADDED)) == 3 * ENTRIES_MAX


async def test_a_message_past_the_cap_pushes_out_the_oldest_conversation_not_the_tasks_course(rpc) -> None:
    tasks, _, _ = rpc
    task_id = await _task(tasks)

    async def post(content: str, **fields: object) -> task_pb2.Message:
        request = tpb.PostMessageRequest(task_id=task_id, role=fields.pop("role", USER), content=content,
                                         **fields)  # type: ignore[arg-type]
        return (await tasks.PostMessage(request)).message

    oldest = await post("use the staging cluster")
    pinned = await post("keep this", pinned=True)
    course = await post("paused", role=SYSTEM, kind=task_pb2.MESSAGE_KIND_LIFECYCLE)
    newest = [await post(f"step {n}") for n in range(MESSAGES_MAX)]

    listed = await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id, recent_message_count=10))
    kept = {pinned.id, course.id, *(m.id for m in newest)}
    assert {m.id for m in listed.messages} >= kept and oldest.id not in {m.id for m in listed.messages}
    assert oldest.id not in {m.id for m in progress.recent_messages}
    assert await _tombstones(tasks, task_id, POSTED) == {oldest.id: {"id": oldest.id}}


async def test_a_write_to_one_task_drops_another_tasks_cached_context_that_held_what_it_pushed_out(rpc) -> None:
    tasks, _, state = rpc
    quiet, busy = await _task(tasks), await _task(tasks)
    await tasks.PostMessage(tpb.PostMessageRequest(task_id=quiet, role=USER, content="the staging cluster is east"))
    context = await state.BuildContext(spb.BuildContextRequest(task_id=quiet, token_budget=2000))
    assert "staging cluster" in context.text  # the read is cached now

    for n in range(MESSAGES_MAX):
        await tasks.PostMessage(tpb.PostMessageRequest(task_id=busy, role=USER, content=f"step {n}"))

    context = await state.BuildContext(spb.BuildContextRequest(task_id=quiet, token_budget=2000))
    assert "staging cluster" not in context.text


async def test_maintenance_deletes_what_a_cap_pushed_out_and_strips_its_events(tmp_path: Path) -> None:
    server = _server(tmp_path, TASKMEM_MAINTENANCE_INTERVAL_SECONDS="0.5")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            task_id = await _task(tasks)
            stored = [(await _add(memory, _note(task_id, n)))[0] for n in range(ENTRIES_MAX + 2)]
            said = [(await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=USER,
                                                                    content=f"chat {n}"))).message
                    for n in range(MESSAGES_MAX + 1)]
            await eventually(lambda: server.sql("SELECT count(*) FROM memory_entries")[0][0] <= ENTRIES_MAX
                             and server.sql("SELECT count(*) FROM messages WHERE content LIKE ?",
                                            ("chat%",))[0][0] <= MESSAGES_MAX
                             and not server.sql("SELECT count(*) FROM events WHERE expires_at > 0")[0][0],
                             "the caps applied", interval=0.2)

            assert {row[0] for row in server.sql("SELECT id FROM memory_entries")} == {e.id for e in stored[2:]}
            assert {row[0] for row in server.sql("SELECT id FROM messages WHERE content LIKE ?", ("chat%",))} == \
                {m.id for m in said[1:]}
            payloads = [str(row[0]) for row in server.sql("SELECT payload FROM events ORDER BY cursor")]
            assert not [p for p in payloads if re.search(r"vault note [01]\b|chat 0\b", p)], "pushed-out content stayed"
    finally:
        server.stop()
