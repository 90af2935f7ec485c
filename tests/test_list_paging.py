"""Every List RPC pages the same way: a page token is bound to the namespace and the filter that made it,
and a token whose sort key has another shape than the list issues is refused, never passed to a query."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import memory_pb2, state_pb2, task_pb2, task_service_pb2 as tpb, wait_pb2
from taskmem.v1 import memory_service_pb2 as mpb, state_service_pb2 as spb, wait_service_pb2 as wpb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess

KEY = "both-key"
ALPHA = [("authorization", f"Bearer {KEY}"), ("x-taskmem-namespace", "alpha")]
BETA = [("authorization", f"Bearer {KEY}"), ("x-taskmem-namespace", "beta")]


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("paging") / "taskmem.db", "--api-key", f"{KEY}:alpha,beta")
    process.start()
    yield process
    process.stop()


class Stubs:
    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.tasks, self.waits = TaskServiceStub(channel), WaitServiceStub(channel)
        self.state, self.memory = StateServiceStub(channel), MemoryServiceStub(channel)


@pytest.fixture(scope="module")
async def lists(keyed_server: ServerProcess) -> AsyncIterator[dict[str, Callable[[str], Awaitable[Any]]]]:
    """Each List RPC (with page_size 1) over two rows written in namespace alpha."""
    async with grpc.aio.insecure_channel(keyed_server.address) as channel:
        s = Stubs(channel)
        task_id = (await s.tasks.CreateTask(tpb.CreateTaskRequest(name="paged"), metadata=ALPHA)).task.id
        await s.tasks.CreateTask(tpb.CreateTaskRequest(name="paged too"), metadata=ALPHA)
        timer = wait_pb2.WaitTarget(timer=wait_pb2.TimerTarget(duration=duration_pb2.Duration(seconds=3600)))
        for n in range(2):
            await s.tasks.RecordAction(tpb.RecordActionRequest(task_id=task_id, summary=f"step {n}"), metadata=ALPHA)
            await s.tasks.PostMessage(tpb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                             content=f"note {n}"), metadata=ALPHA)
            await s.tasks.RecordContextSnapshot(tpb.RecordContextSnapshotRequest(task_id=task_id, label=f"s{n}"),
                                                metadata=ALPHA)
            await s.waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=timer), metadata=ALPHA)
            await s.memory.AddMemoryEntries(mpb.AddMemoryEntriesRequest(entries=[mpb.NewMemoryEntry(
                task_id=task_id, type=memory_pb2.MEMORY_TYPE_DISCOVERY, summary=f"found {n}")]), metadata=ALPHA)
            await s.memory.UpsertKnowledge(mpb.UpsertKnowledgeRequest(
                category=memory_pb2.KNOWLEDGE_CATEGORY_FACT, key=f"k{n}", value="v"), metadata=ALPHA)
            await s.memory.RecordEpisode(mpb.RecordEpisodeRequest(
                task_id=task_id, agent_id="coder", action=memory_pb2.EPISODE_ACTION_ATTEMPTED, approach=f"a{n}"),
                metadata=ALPHA)
            await s.memory.RegisterArtifact(mpb.RegisterArtifactRequest(
                task_id=task_id, type=memory_pb2.ARTIFACT_TYPE_FILE, path=f"out/{n}"), metadata=ALPHA)
            await s.memory.RecordPattern(mpb.RecordPatternRequest(pattern_type="p", pattern_key=f"k{n}"),
                                         metadata=ALPHA)
        await s.state.UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task_id, items=[
            state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_DECISION, text="Use Redis for caching"),
            state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_ACTION, text="Set up the nightly backup")]),
            metadata=ALPHA)

        def call(method: Any, request: Any) -> Callable[..., Awaitable[Any]]:
            async def listed(token: str, metadata: list[tuple[str, str]] = ALPHA) -> Any:
                paged = type(request)()
                paged.CopyFrom(request)
                paged.page_size, paged.page_token = 1, token
                return await method(paged, metadata=metadata)
            return listed

        yield {
            "ListTasks": call(s.tasks.ListTasks, tpb.ListTasksRequest()),
            "ListActions": call(s.tasks.ListActions, tpb.ListActionsRequest(task_id=task_id)),
            "ListMessages": call(s.tasks.ListMessages, tpb.ListMessagesRequest(task_id=task_id)),
            "ListContextSnapshots": call(s.tasks.ListContextSnapshots,
                                         tpb.ListContextSnapshotsRequest(task_id=task_id)),
            "ListEvents": call(s.tasks.ListEvents, tpb.ListEventsRequest()),
            "ListWaits": call(s.waits.ListWaits, wpb.ListWaitsRequest(task_id=task_id)),
            "ListStateItems": call(s.state.ListStateItems, spb.ListStateItemsRequest(task_id=task_id)),
            "QueryMemoryEntries": call(s.memory.QueryMemoryEntries, mpb.QueryMemoryEntriesRequest(
                filter=memory_pb2.MemoryFilter(task_id=task_id))),
            "QueryKnowledge": call(s.memory.QueryKnowledge, mpb.QueryKnowledgeRequest()),
            "ListEpisodes": call(s.memory.ListEpisodes, mpb.ListEpisodesRequest()),
            "ListArtifacts": call(s.memory.ListArtifacts, mpb.ListArtifactsRequest()),
            "ListPatterns": call(s.memory.ListPatterns, mpb.ListPatternsRequest()),
        }


LISTS = ["ListTasks", "ListActions", "ListMessages", "ListContextSnapshots", "ListEvents", "ListWaits",
         "ListStateItems", "QueryMemoryEntries", "QueryKnowledge", "ListEpisodes", "ListArtifacts", "ListPatterns"]


def _with_key(token: str, key: list[Any]) -> str:
    """The token with another sort key and the same filter fingerprint: what a hand-made token looks like."""
    raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    return base64.urlsafe_b64encode(json.dumps({**raw, "k": key}).encode()).decode().rstrip("=")


async def _refused(call: Awaitable[Any], message_part: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call
    assert_rpc_error(raised.value, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "page_token")
    assert message_part in (raised.value.details() or "")


@pytest.mark.parametrize("name", LISTS)
async def test_a_page_token_pages_on_in_its_namespace_and_is_refused_in_another(lists, name: str) -> None:
    listed = lists[name]
    first = await listed("")
    assert first.next_page_token
    second = await listed(first.next_page_token)
    assert second != first
    await _refused(listed(first.next_page_token, BETA), "different filter")


@pytest.mark.parametrize("name", LISTS)
async def test_a_page_token_whose_key_has_another_shape_is_refused(lists, name: str) -> None:
    listed = lists[name]
    token = (await listed("")).next_page_token
    for key in ([], [True], ["a", "b", "c", "d"], [{"x": 1}]):
        await _refused(listed(_with_key(token, key)), "not a token this server issued")
    await _refused(listed("garbage"), "not a token this server issued")
