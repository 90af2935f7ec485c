"""SearchMemories' opt-in spread_hits end to end (issue 43): HYBRID's hits without it are the fused order;
with it a stretch of adjacent turns of one task gives up places to the rest of the conversation, while
FULLTEXT and SEMANTIC ignore it (that another task's entries are never lowered: tests/unit)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest

from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess

# One conversation: three turns in a row about the flat by the river, filler, then the later flat by the castle.
TURNS = [
    "Maria: the flat by the river in Lisbon has a balcony and a view of the water",
    "Tom: the flat by the river in Lisbon has a balcony, and a view of the water too",
    "Maria: yes, the flat by the river in Lisbon with the balcony and the water view",
    "Tom: my bicycle chain snapped on the hill again",
    "Maria: the quarterly tax form is due on Friday",
    "Tom: the cat knocked the vase off the shelf",
    "Maria: we signed for the flat by the castle in Lisbon, it has a balcony over the old town",
]
QUERY = "Which flat in Lisbon with a balcony did they look at?"


@pytest.fixture
async def memory(server: ServerProcess) -> AsyncIterator[tuple[MemoryServiceStub, str]]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        task = (await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="flats"))).task
        yield MemoryServiceStub(channel), task.id


async def _store(stub: MemoryServiceStub, task_id: str) -> list[str]:
    added = await stub.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
        mpb.NewMemoryEntry(task_id=task_id, type=memory_pb2.MEMORY_TYPE_CONTEXT, summary=turn) for turn in TURNS]))
    return [entry.id for entry in added.entries]


async def _search(stub: MemoryServiceStub, task_id: str, spread: bool, limit: int = 2,
                  mode: int = memory_pb2.SEARCH_MODE_HYBRID) -> mpb.SearchMemoriesResponse:
    return await stub.SearchMemories(mpb.SearchMemoriesRequest(
        query=QUERY, mode=mode, filter=memory_pb2.MemoryFilter(task_id=task_id), limit=limit,
        spread_hits=spread, wait_for_embeddings=True), timeout=60)


async def test_spread_hits_lets_the_rest_of_the_conversation_past_a_stretch_of_adjacent_turns(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    ids = await _store(stub, task_id)
    river, castle = set(ids[:3]), ids[6]

    fused = await _search(stub, task_id, spread=False)
    assert {hit.entry.id for hit in fused.hits} <= river  # the stretch takes both places
    spread = await _search(stub, task_id, spread=True)
    assert [hit.entry.id for hit in spread.hits][0] == fused.hits[0].entry.id
    assert spread.hits[1].entry.id == castle  # the adjacent river turns lost 0.05 each to the first one chosen
    assert spread.hits[0].score == pytest.approx(fused.hits[0].score)  # scores stay the fused ones

    everything = await _search(stub, task_id, spread=True, limit=10)
    assert {hit.entry.id for hit in everything.hits} == {hit.entry.id for hit in
                                                         (await _search(stub, task_id, False, 10)).hits}


async def test_spread_hits_leaves_fulltext_and_semantic_as_they_were(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    await _store(stub, task_id)
    for mode in (memory_pb2.SEARCH_MODE_FULLTEXT, memory_pb2.SEARCH_MODE_SEMANTIC):
        with_spread = await _search(stub, task_id, spread=True, limit=5, mode=mode)
        without = await _search(stub, task_id, spread=False, limit=5, mode=mode)
        assert [h.entry.id for h in with_spread.hits] == [h.entry.id for h in without.hits], mode
