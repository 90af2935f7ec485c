"""SearchMemories' opt-in recency_ranking end to end (issue 29, point 5): without it relevance alone ranks;
with it a newer entry can outrank a better match, an important type can outrank context, and bad weights
are INVALID_ARGUMENT naming the field."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess

CONTEXT, INSTRUCTION = memory_pb2.MEMORY_TYPE_CONTEXT, memory_pb2.MEMORY_TYPE_USER_INSTRUCTION


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("recency") / "taskmem.db",
                            env={"TASKMEM_EMBEDDING_BACKEND": "none"})
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def memory(server: ServerProcess) -> AsyncIterator[tuple[MemoryServiceStub, str]]:
    async with grpc.aio.insecure_channel(server.address) as channel:
        task = (await TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="deploy"))).task
        yield MemoryServiceStub(channel), task.id


async def _add(stub: MemoryServiceStub, task_id: str, summary: str, kind: int = CONTEXT) -> str:
    added = await stub.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[
        mpb.NewMemoryEntry(task_id=task_id, type=kind, summary=summary)]))
    return added.entries[0].id


async def _search(stub: MemoryServiceStub, task_id: str, query: str,
                  ranking: mpb.RecencyRanking | None = None) -> list[str]:
    found = await stub.SearchMemories(mpb.SearchMemoriesRequest(
        query=query, filter=memory_pb2.MemoryFilter(task_id=task_id), recency_ranking=ranking))
    return [hit.entry.id for hit in found.hits]


async def test_recency_ranking_lets_a_newer_entry_outrank_a_better_match_only_when_asked(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    older = await _add(stub, task_id, "deploy target: deploy to the staging deploy host")
    await asyncio.sleep(2.0)
    newer = await _add(stub, task_id, "deploy target is now production")

    assert await _search(stub, task_id, "deploy target") == [older, newer]  # relevance alone: the better match
    recent = mpb.RecencyRanking(recency_weight=0.6, half_life=duration_pb2.Duration(seconds=1))
    assert await _search(stub, task_id, "deploy target", recent) == [newer, older]


async def test_importance_weight_ranks_a_users_instruction_above_context_that_matches_as_well(
        memory: tuple[MemoryServiceStub, str]) -> None:
    stub, task_id = memory
    context = await _add(stub, task_id, "cache layer uses redis")
    instruction = await _add(stub, task_id, "cache layer uses redis", INSTRUCTION)

    by_relevance = await _search(stub, task_id, "redis cache")
    assert set(by_relevance) == {context, instruction}
    important = mpb.RecencyRanking(importance_weight=0.3)
    assert await _search(stub, task_id, "redis cache", important) == [instruction, context]


@pytest.mark.parametrize(("ranking", "field"), [
    (mpb.RecencyRanking(recency_weight=1.5), "recency_ranking.recency_weight"),
    (mpb.RecencyRanking(importance_weight=-0.1), "recency_ranking.importance_weight"),
    (mpb.RecencyRanking(recency_weight=0.7, importance_weight=0.5), "recency_ranking.importance_weight"),
    (mpb.RecencyRanking(half_life=duration_pb2.Duration(seconds=-1)), "recency_ranking.half_life"),
])
async def test_recency_weights_out_of_range_are_invalid_argument_naming_the_field(
        memory: tuple[MemoryServiceStub, str], ranking: mpb.RecencyRanking, field: str) -> None:
    stub, task_id = memory
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await _search(stub, task_id, "anything", ranking)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in (raised.value.details() or "")
