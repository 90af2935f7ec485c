"""Retention end to end (issue 29, point 2), on either engine (`pytest --engine postgres`): a memory entry, a
message or an episode expires at its own expire_time or at its namespace's configured TTL; from that instant no read
returns it (queries, relevant memories, every search mode, ListMessages, GetProgress, BuildContext,
ListEpisodes, the event log), with no sweeper having run; pinned items, decisions and the messages recording a task's course
stay; an action's log lines expire once the action has finished; maintenance then deletes what expired
and strips its events to tombstones, keeping every cursor."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import timestamp_pb2

from taskmem.v1 import event_pb2, memory_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as pb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS, eventually

DISCOVERY, DECISION, TOOL_RESULT = (memory_pb2.MEMORY_TYPE_DISCOVERY, memory_pb2.MEMORY_TYPE_DECISION,
                                    memory_pb2.MEMORY_TYPE_TOOL_RESULT)
MODES = (memory_pb2.SEARCH_MODE_FULLTEXT, memory_pb2.SEARCH_MODE_SEMANTIC, memory_pb2.SEARCH_MODE_HYBRID)
ADDED, POSTED = event_pb2.EVENT_TYPE_MEMORY_ENTRY_ADDED, event_pb2.EVENT_TYPE_MESSAGE_POSTED
USER, SYSTEM = task_pb2.MESSAGE_ROLE_USER, task_pb2.MESSAGE_ROLE_SYSTEM
# How long an item lives in these tests, configured or asked for: every write and read that must happen before it
# expires gets this long, on a machine as loaded as the suite's proof (one RPC there took over a second, and a
# 1 s expire_time was in the past by the time of its write); each test waits it out, so it is also their length.
TTL_SECONDS = 20


def _server(folder: Path, **settings: str) -> ServerProcess:
    """A server whose namespace "default" keeps memory entries TTL_SECONDS (unless settings say otherwise)."""
    env = {"TASKMEM_RETENTION": f"{{default: {{memory_entries: {TTL_SECONDS}, messages: {TTL_SECONDS},"
                                f" action_logs: {TTL_SECONDS}, episodes: {TTL_SECONDS}}}}}",
           "TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0", **settings}
    return ServerProcess(folder / "taskmem.db", env=env)


@pytest.fixture(scope="module")
def retention_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """Builtin embeddings (every search mode), and no maintenance: what reads leave out, they leave out alone."""
    process = _server(tmp_path_factory.mktemp("retention"))
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def rpc(retention_server: ServerProcess) -> AsyncIterator[tuple[TaskServiceStub, MemoryServiceStub,
                                                                       StateServiceStub]]:
    async with grpc.aio.insecure_channel(retention_server.address) as channel:
        yield TaskServiceStub(channel), MemoryServiceStub(channel), StateServiceStub(channel)


def _in(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromMicroseconds(int((time.time() + seconds) * 1_000_000))
    return stamp


async def _until(stamp: timestamp_pb2.Timestamp) -> None:
    await asyncio.sleep(max(0.0, stamp.ToMicroseconds() / 1_000_000 - time.time()) + 0.05)


async def _task(tasks: TaskServiceStub) -> str:
    return (await tasks.CreateTask(tpb.CreateTaskRequest(name="Rotate the keys", goal="Rotate every key"))).task.id


async def _add(memory: MemoryServiceStub, *entries: pb.NewMemoryEntry) -> list[memory_pb2.MemoryEntry]:
    return list((await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=list(entries)))).entries)


async def _seen(tasks: TaskServiceStub, memory: MemoryServiceStub, state: StateServiceStub, task_id: str,
                query: str) -> dict[str, set[str]]:
    """The entry ids (summaries, for BuildContext) each read of the task returns."""
    f = memory_pb2.MemoryFilter(task_id=task_id)
    seen = {"query": {e.id for e in (await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(filter=f))).entries},
            "relevant": {e.id for e in (await memory.GetRelevantMemories(pb.GetRelevantMemoriesRequest(
                task_id=task_id, subtask_id="rotate"))).entries}}
    for mode in MODES:
        found = await memory.SearchMemories(pb.SearchMemoriesRequest(query=query, mode=mode, filter=f, limit=20,
                                                                     wait_for_embeddings=True))
        seen[memory_pb2.SearchMode.Name(mode)] = {hit.entry.id for hit in found.hits}
    context = await state.BuildContext(spb.BuildContextRequest(task_id=task_id, token_budget=2000, query=query))
    seen["context"] = {line for line in context.text.splitlines() if "vault" in line}
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[ADDED]))
    seen["events"] = {event.payload["id"] for event in events.events if "summary" in event.payload}
    return seen


async def test_an_entry_is_gone_from_every_read_the_moment_it_expires(rpc) -> None:
    tasks, memory, state = rpc
    task_id = await _task(tasks)
    expire = _in(TTL_SECONDS)
    stored = await _add(memory, pb.NewMemoryEntry(
        task_id=task_id, type=DISCOVERY, subtask_id="rotate", summary="The vault token sits in deploy.env",
        expire_time=expire))
    entry_id = stored[0].id
    assert stored[0].expire_time == expire

    before = await _seen(tasks, memory, state, task_id, "vault token")
    assert all(before[read] for read in before), before  # every read shows it (BuildContext's read now cached)
    await _until(expire)
    after = await _seen(tasks, memory, state, task_id, "vault token")

    assert after == {read: set() for read in before}, "an expired entry came back before any sweep"
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[ADDED]))
    [tombstone] = events.events
    assert tombstone.expired and dict(tombstone.payload) == {"id": entry_id}


async def _messages_seen(tasks: TaskServiceStub, state: StateServiceStub, task_id: str) -> dict[str, set[str]]:
    """The message ids (or contents, for BuildContext) each read of the task's thread returns."""
    listed = await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))
    progress = await tasks.GetProgress(tpb.GetProgressRequest(task_id=task_id, recent_message_count=10))
    context = await state.BuildContext(spb.BuildContextRequest(task_id=task_id, token_budget=2000))
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[POSTED]))
    return {"list": {m.id for m in listed.messages}, "progress": {m.id for m in progress.recent_messages},
            "context": {line for line in context.text.splitlines() if "staging" in line},
            "events": {event.payload["id"] for event in events.events if "content" in event.payload}}


async def test_a_message_is_gone_from_every_read_the_moment_it_expires(rpc) -> None:
    tasks, _, state = rpc
    task_id = await _task(tasks)
    expire = _in(TTL_SECONDS)
    posted = (await tasks.PostMessage(tpb.PostMessageRequest(
        task_id=task_id, role=USER, content="Use the staging cluster", expire_time=expire))).message
    assert posted.expire_time == expire

    before = await _messages_seen(tasks, state, task_id)
    assert all(before[read] for read in before), before
    await _until(expire)
    assert await _messages_seen(tasks, state, task_id) == {read: set() for read in before}
    [tombstone] = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id], types=[POSTED]))).events
    assert tombstone.expired and dict(tombstone.payload) == {"id": posted.id}


async def test_the_configured_ttl_spares_pinned_messages_and_the_tasks_course(rpc) -> None:
    tasks, _, _ = rpc
    task_id = await _task(tasks)
    plain, pinned, course = [(await tasks.PostMessage(request)).message for request in (
        tpb.PostMessageRequest(task_id=task_id, role=USER, content="hello"),
        tpb.PostMessageRequest(task_id=task_id, role=USER, content="keep this", pinned=True),
        tpb.PostMessageRequest(task_id=task_id, role=SYSTEM, kind=task_pb2.MESSAGE_KIND_LIFECYCLE, content="paused"))]
    assert plain.HasField("expire_time")
    assert not pinned.HasField("expire_time") and not course.HasField("expire_time")
    await _until(plain.expire_time)
    listed = await tasks.ListMessages(tpb.ListMessagesRequest(task_id=task_id))
    assert {m.id for m in listed.messages} >= {pinned.id, course.id} and plain.id not in {m.id for m in listed.messages}


async def _action(tasks: TaskServiceStub, task_id: str, lines: int) -> str:
    action_id = (await tasks.RecordAction(tpb.RecordActionRequest(
        task_id=task_id, type=task_pb2.ACTION_TYPE_CLI, summary="make deploy"))).action.id
    await tasks.AppendActionLog(tpb.AppendActionLogRequest(action_id=action_id, lines=[
        tpb.LogLineInput(content=f"line {n}") for n in range(lines)]))
    return action_id


async def _tail(tasks: TaskServiceStub, action_id: str, count: int) -> list[str]:
    """The first `count` lines the tail gives (all of them, when the action has finished)."""
    lines = []
    async for response in tasks.TailActionLog(tpb.TailActionLogRequest(action_id=action_id), timeout=HANG_GUARD_SECONDS):
        lines.append(response.line.content)
        if len(lines) == count:
            break
    return lines


async def test_log_lines_expire_after_their_action_finishes_never_while_it_runs(rpc) -> None:
    tasks, _, _ = rpc
    task_id = await _task(tasks)
    running, finished = await _action(tasks, task_id, 3), await _action(tasks, task_id, 2)
    await tasks.CompleteAction(tpb.CompleteActionRequest(action_id=finished,
                                                         status=task_pb2.ACTION_STATUS_SUCCEEDED))
    assert await _tail(tasks, finished, 0) == ["line 0", "line 1"]

    await asyncio.sleep(TTL_SECONDS + 0.2)
    assert await _tail(tasks, finished, 0) == [], "a finished action's lines outlived their TTL"
    assert await _tail(tasks, running, 3) == ["line 0", "line 1", "line 2"], "a running action's log was cut"


def _episode(task_id: str, approach: str, **fields: object) -> pb.RecordEpisodeRequest:
    return pb.RecordEpisodeRequest(task_id=task_id, agent_id="coder", action=memory_pb2.EPISODE_ACTION_COMPLETED,
                                   approach=approach, **fields)


async def test_an_episode_is_gone_even_from_archived_listings_the_moment_it_expires(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    expire = _in(TTL_SECONDS)
    timed = (await memory.RecordEpisode(_episode(task_id, "rotate by hand", expire_time=expire))).episode
    plain = (await memory.RecordEpisode(_episode(task_id, "rotate with kms"))).episode
    pinned = (await memory.RecordEpisode(_episode(task_id, "rotate with vault", pinned=True))).episode
    assert timed.expire_time == expire and plain.HasField("expire_time") and not pinned.HasField("expire_time")

    async def listed() -> set[str]:
        found = await memory.ListEpisodes(pb.ListEpisodesRequest(task_id=task_id, include_archived=True))
        return {e.id for e in found.episodes}

    assert await listed() == {timed.id, plain.id, pinned.id}
    # The plain one's configured TTL counts from its write, after `expire` was chosen: wait for the later of the two.
    await _until(max(expire, plain.expire_time, key=lambda stamp: stamp.ToMicroseconds()))
    assert await listed() == {pinned.id}
    events = await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id],
                                                          types=[event_pb2.EVENT_TYPE_EPISODE_RECORDED]))
    assert {e.payload["id"] for e in events.events if e.expired} == {timed.id, plain.id}
    assert all("approach" not in e.payload for e in events.events if e.expired)


async def test_a_search_finds_live_entries_below_expired_ones_that_outranked_them(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    expire = _in(TTL_SECONDS)
    await _add(memory, *(pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary=f"vault {n}", expire_time=expire)
                         for n in range(5)))
    [live] = await _add(memory, pb.NewMemoryEntry(task_id=task_id, type=DECISION,
                                                  summary="Rotate the vault keys before the audit next week"))
    await _until(expire)
    for mode in MODES:
        found = await memory.SearchMemories(pb.SearchMemoriesRequest(
            query="vault", mode=mode, filter=memory_pb2.MemoryFilter(task_id=task_id), limit=1,
            wait_for_embeddings=True))
        assert [hit.entry.id for hit in found.hits] == [live.id], memory_pb2.SearchMode.Name(mode)


async def test_the_configured_ttl_spares_pinned_entries_and_decisions(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    sent = time.time()
    plain, pinned, decision = await _add(
        memory, pb.NewMemoryEntry(task_id=task_id, type=TOOL_RESULT, summary="ls printed 3 keys"),
        pb.NewMemoryEntry(task_id=task_id, type=TOOL_RESULT, summary="The key ring lives in kms", pinned=True),
        pb.NewMemoryEntry(task_id=task_id, type=DECISION, summary="Rotate with the kms CLI"))
    answered = time.time()

    # The TTL counts from the write, which the server made between sending and the answer (one clock).
    assert sent + TTL_SECONDS <= plain.expire_time.ToMicroseconds() / 1e6 <= answered + TTL_SECONDS
    assert not pinned.HasField("expire_time") and not decision.HasField("expire_time")
    await _until(plain.expire_time)
    listed = await memory.QueryMemoryEntries(pb.QueryMemoryEntriesRequest(
        filter=memory_pb2.MemoryFilter(task_id=task_id)))
    assert {e.id for e in listed.entries} == {pinned.id, decision.id}


async def test_an_expire_time_must_be_ahead_and_not_on_a_pinned_entry(rpc) -> None:
    tasks, memory, _ = rpc
    task_id = await _task(tasks)
    for entry, field in ((pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary="late", expire_time=_in(-1)),
                          "entries[0].expire_time"),
                         (pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary="both", expire_time=_in(60),
                                            pinned=True), "entries[0].expire_time")):
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await memory.AddMemoryEntries(pb.AddMemoryEntriesRequest(entries=[entry]))
        assert_rpc_error(raised.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", field)


async def test_maintenance_deletes_expired_entries_and_leaves_gap_free_tombstones(tmp_path: Path) -> None:
    server = _server(tmp_path, TASKMEM_MAINTENANCE_INTERVAL_SECONDS="0.5", TASKMEM_EMBEDDING_BACKEND="none",
                     TASKMEM_RETENTION_DELETE_PAGE="2")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks, memory = TaskServiceStub(channel), MemoryServiceStub(channel)
            task_id = await _task(tasks)
            expire = _in(TTL_SECONDS)
            doomed = await _add(memory, *(pb.NewMemoryEntry(task_id=task_id, type=DISCOVERY, summary=f"note {n}",
                                                            tags=["t"], expire_time=expire) for n in range(5)))
            kept = await _add(memory, pb.NewMemoryEntry(task_id=task_id, type=DECISION,
                                                         summary="kept for the audit, unlike every other note"))
            logged = await _action(tasks, task_id, 4)
            await tasks.CompleteAction(tpb.CompleteActionRequest(action_id=logged,
                                                                 status=task_pb2.ACTION_STATUS_SUCCEEDED))
            tried = (await memory.RecordEpisode(_episode(task_id, "note tried", expire_time=expire))).episode
            said = [(await tasks.PostMessage(tpb.PostMessageRequest(
                task_id=task_id, role=USER, content=f"note {n}", expire_time=expire))).message for n in range(3)]
            cursors = [e.cursor for e in (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id]))).events]

            await _until(expire)
            await asyncio.sleep(TTL_SECONDS)  # the log lines' TTL, from when they were written
            await eventually(lambda: (server.sql("SELECT count(*) FROM memory_entries")[0][0] == 1
                                      and not server.sql("SELECT count(*) FROM events WHERE expires_at > 0")[0][0]
                                      and not server.sql("SELECT count(*) FROM action_logs")[0][0]),
                             "maintenance deleting the expired entries, events and log lines", interval=0.2)

            assert server.sql("SELECT id FROM memory_entries") == [(kept[0].id,)]
            assert server.sql("SELECT count(*) FROM memory_entry_tags")[0][0] == 0
            assert server.sql("SELECT count(*) FROM action_logs")[0][0] == 0
            stored = server.sql("SELECT payload FROM events ORDER BY cursor")
            assert [p for p in stored if re.search(r"note (\d|tried)", str(p[0]))] == [], \
                "expired content stayed in the log"
            events = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id]))).events
            assert [e.cursor for e in events][:len(cursors)] == cursors, "a cursor went missing"
            assert {e.payload["id"] for e in events if e.expired} == {e.id for e in [*doomed, *said, tried]}
            assert server.sql("SELECT count(*) FROM episodes")[0][0] == 0
            found = await memory.SearchMemories(pb.SearchMemoriesRequest(
                query="note", mode=memory_pb2.SEARCH_MODE_FULLTEXT, filter=memory_pb2.MemoryFilter(task_id=task_id),
                limit=1))
            assert [hit.entry.id for hit in found.hits] == [kept[0].id], "deleted entries still outrank live ones"
            assert server.sql("SELECT count(*) FROM messages WHERE content LIKE ?", ("note%",))[0][0] == 0
    finally:
        server.stop()



async def test_the_event_logs_ttl_deletes_old_events_and_a_read_from_before_gets_one_tombstone(tmp_path: Path) -> None:
    server = _server(tmp_path, TASKMEM_MAINTENANCE_INTERVAL_SECONDS="0.5", TASKMEM_EMBEDDING_BACKEND="none",
                     TASKMEM_RETENTION=f"{{default: {{events: {TTL_SECONDS}}}}}")
    server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            tasks = TaskServiceStub(channel)
            task_id = await _task(tasks)
            for n in range(3):
                await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=USER, content=f"old {n}"))
            old = [e.cursor for e in (await tasks.ListEvents(tpb.ListEventsRequest())).events]
            await asyncio.sleep(TTL_SECONDS + 0.5)
            late = (await tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=USER, content="late")))
            await eventually(lambda: not server.sql("SELECT count(*) FROM events WHERE cursor <= ?", (old[-1],))[0][0],
                             "maintenance deleting the events past their TTL", interval=0.2)

            events = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[task_id]))).events
            gap, *rest = events
            assert gap.type == event_pb2.EVENT_TYPE_EVENTS_EXPIRED and gap.expired and gap.cursor >= old[-1]
            assert dict(gap.payload) == {"first_cursor": 1, "last_cursor": gap.cursor}
            assert [e.payload["content"] for e in rest if e.type == POSTED] == ["late"]
            assert all(e.cursor > gap.cursor for e in rest)
            stream = tasks.SubscribeEvents(tpb.SubscribeEventsRequest(after_cursor=old[0]))
            first = (await stream.read()).event
            stream.cancel()
            assert first.type == event_pb2.EVENT_TYPE_EVENTS_EXPIRED and first.payload["first_cursor"] == old[0] + 1
            only_posts = (await tasks.ListEvents(tpb.ListEventsRequest(types=[POSTED]))).events
            assert [e.payload["content"] for e in only_posts] == ["late"], "a type filter without the tombstone type"

            # A task whose webhook has events still to send holds the cursor: nothing of its namespace past
            # its delivered cursor is deleted (its host is not allowed, so nothing is ever sent).
            hooked = (await tasks.CreateTask(tpb.CreateTaskRequest(
                name="hooked", callback_url="https://hooks.example.com/taskmem"))).task.id
            await tasks.PostMessage(tpb.PostMessageRequest(task_id=hooked, role=USER, content="held"))
            await asyncio.sleep(TTL_SECONDS + 1.5)
            held = (await tasks.ListEvents(tpb.ListEventsRequest(task_ids=[hooked]))).events
            assert [e.payload["content"] for e in held if e.type == POSTED] == ["held"]
    finally:
        server.stop()
