"""HYBRID's spreading end to end (issue 43): a stretch of adjacent turns of one task that say the same gives up
places to the rest of the conversation, by default and with spread_hits (which lowers every neighbour, alike or
not: tests/unit says how the two differ), while FULLTEXT and SEMANTIC keep their order (that another task's
entries are never lowered: tests/unit).
"""

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


async def test_turns_saying_the_same_give_up_places_to_the_rest_of_the_conversation(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    ids = await _store(stub, task_id)
    river, castle = set(ids[:3]), ids[6]

    for spread in (False, True):
        found = await _search(stub, task_id, spread=spread)
        assert found.hits[0].entry.id in river  # the best of the stretch first
        assert found.hits[1].entry.id == castle, spread  # its neighbours, restating it, lost 0.05 each
        fused_order = await _search(stub, task_id, spread=spread, limit=10)
        assert sorted(hit.score for hit in fused_order.hits) == sorted(  # scores stay the fused ones
            (hit.score for hit in (await _search(stub, task_id, not spread, 10)).hits))
        assert {hit.entry.id for hit in fused_order.hits} == set(ids)


async def test_spread_hits_leaves_fulltext_and_semantic_as_they_were(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    await _store(stub, task_id)
    for mode in (memory_pb2.SEARCH_MODE_FULLTEXT, memory_pb2.SEARCH_MODE_SEMANTIC):
        with_spread = await _search(stub, task_id, spread=True, limit=5, mode=mode)
        without = await _search(stub, task_id, spread=False, limit=5, mode=mode)
        assert [h.entry.id for h in with_spread.hits] == [h.entry.id for h in without.hits], mode
