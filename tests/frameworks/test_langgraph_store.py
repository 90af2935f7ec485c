"""TaskmemStore behaves as LangGraph's stores do (the behaviours LangGraph's own store tests check: namespace rules,
filters, TTL refresh, list_namespaces prefix/suffix/depth), and a query search is taskmem's HYBRID search over the
items' memory entries. Against a live server, on both engines (POSTGRES_E2E)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from taskmem.v1 import memory_pb2, memory_service_pb2 as mpb, memory_service_pb2_grpc
from taskmem_langgraph import TaskmemStore
from tests.support.rpc_errors import error_info
from tests.support.server_process import ServerProcess


@pytest.fixture(scope="module")
def store_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("store") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def store(store_server: ServerProcess) -> AsyncIterator[TaskmemStore]:
    opened = TaskmemStore(store_server.address)
    yield opened
    await opened.aclose()


def fresh() -> str:
    """A label no other test uses, so tests share one server."""
    return f"t{uuid.uuid4().hex[:12]}"


async def test_put_get_update_and_delete_keep_values_exactly_and_times(store: TaskmemStore) -> None:
    ns = (fresh(), "profile")
    value = {"name": "Ada", "age": 36, "score": 0.5, "tags": ["a", "b"], "nested": {"x": None, "y": True}}
    await store.aput(ns, "me", value)
    first = await store.aget(ns, "me")
    assert first is not None and first.value == value and type(first.value["age"]) is int
    assert first.namespace == ns and first.key == "me" and first.created_at == first.updated_at
    await store.aput(ns, "me", {**value, "age": 37})
    second = await store.aget(ns, "me")
    assert second is not None and second.value["age"] == 37
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    await store.adelete(ns, "me")
    assert await store.aget(ns, "me") is None
    await store.adelete(ns, "me")  # deleting a missing item is no error


async def test_namespace_rules_are_enforced_by_the_adapter_and_the_server(store: TaskmemStore,
                                                                          store_server: ServerProcess) -> None:
    for bad in [(), ("a.b",), ("",), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            await store.aput(bad, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        await store.abatch([PutOp(("ok", ""), "k", {"v": 1})])
    async with grpc.aio.insecure_channel(store_server.address) as channel:
        memory = memory_service_pb2_grpc.MemoryServiceStub(channel)
        for path, field in [([], "writes[0].path"), (["a.b"], "writes[0].path[0]"), (["*"], "writes[0].path[0]")]:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await memory.PutStoreItems(mpb.PutStoreItemsRequest(writes=[mpb.StoreItemWrite(
                    path=path, key="k", value_json='{"v": 1}')]))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert error_info(refused.value).metadata["field"] == field
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await memory.PutStoreItems(mpb.PutStoreItemsRequest(writes=[mpb.StoreItemWrite(
                path=["a"], key="k", value_json="[1]")]))
        assert error_info(refused.value).metadata["field"] == "writes[0].value_json"


async def test_search_filters_by_equality_nested_objects_and_comparison_operators(store: TaskmemStore) -> None:
    root = fresh()
    docs = {"a": {"color": "red", "n": 1, "meta": {"lang": "en", "v": 2}},
            "b": {"color": "blue", "n": 5, "meta": {"lang": "fr"}},
            "c": {"color": "red", "n": 9, "list": [1, 2]}}
    for key, value in docs.items():
        await store.aput((root, "docs"), key, value)

    async def keys(**filter_: object) -> set[str]:
        return {item.key for item in await store.asearch((root,), filter=filter_)}

    assert await keys(color="red") == {"a", "c"}
    assert await keys(color={"$eq": "blue"}) == {"b"}
    assert await keys(color={"$ne": "red"}) == {"b"}
    assert await keys(n={"$gt": 1}) == {"b", "c"} and await keys(n={"$gte": 5}) == {"b", "c"}
    assert await keys(n={"$lt": 5}) == {"a"} and await keys(n={"$lte": 5}) == {"a", "b"}
    assert await keys(n={"$gt": 1, "$lt": 9}) == {"b"}
    assert await keys(meta={"lang": "en"}) == {"a"}
    assert await keys(list=[1, 2]) == {"c"} and await keys(list=[1]) == set()
    assert await keys(color="red", n={"$gt": 4}) == {"c"}
    assert await keys(missing="x") == set()
    everything = await store.asearch((root,), limit=2)
    rest = await store.asearch((root,), limit=2, offset=2)
    assert len(everything) == 2 and len(rest) == 1
    assert {i.key for i in everything + rest} == {"a", "b", "c"}
    assert [i.key for i in everything + rest] == ["c", "b", "a"]  # most recently put first
    assert await store.asearch((fresh(),)) == []


async def test_a_query_is_a_hybrid_search_over_the_items_memory_entries(store: TaskmemStore,
                                                                       store_server: ServerProcess) -> None:
    root = fresh()
    await store.aput((root, "notes"), "gym", {"text": "Maria goes to the climbing gym on Tuesdays"})
    await store.aput((root, "notes"), "food", {"text": "Maria cooks pasta with basil"})
    await store.aput((root, "notes"), "hidden", {"text": "climbing climbing climbing"}, index=False)
    await store.aput((root, "other"), "gym", {"text": "a climbing wall downtown"})

    hits = await store.asearch((root, "notes"), query="climbing gym")
    assert hits[0].key == "gym" and hits[0].score is not None
    scored = [h.score is not None for h in hits]
    assert scored == sorted(scored, reverse=True)  # what the search found comes first, best first
    assert "hidden" in [h.key for h in hits if h.score is None]  # not indexed: only listed after the found ones
    assert {h.namespace for h in hits} == {(root, "notes")}

    # the value changes: the old text is no longer found, the new one is
    await store.aput((root, "notes"), "gym", {"text": "Maria now swims at the lake"})
    hits = await store.asearch((root, "notes"), query="swims lake")
    assert hits[0].key == "gym" and hits[0].value["text"].startswith("Maria now swims")
    async with grpc.aio.insecure_channel(store_server.address) as channel:
        found = await memory_service_pb2_grpc.MemoryServiceStub(channel).SearchMemories(mpb.SearchMemoriesRequest(
            query="climbing gym Tuesdays", mode=memory_pb2.SEARCH_MODE_FULLTEXT))
        assert not [h for h in found.hits if "Tuesdays" in h.entry.detail]  # the replaced text's entry is retired
        found = await memory_service_pb2_grpc.MemoryServiceStub(channel).SearchMemories(mpb.SearchMemoriesRequest(
            query="swims lake", mode=memory_pb2.SEARCH_MODE_FULLTEXT))
        assert [h.entry.source for h in found.hits][:1] == ["store"]


async def test_index_fields_choose_the_text_that_is_searched(store_server: ServerProcess) -> None:
    root = fresh()
    store = TaskmemStore(store_server.address, index={"dims": 384, "embed": "unused", "fields": ["title"]})
    try:
        await store.aput((root,), "a", {"title": "penguins colony", "body": "tax report"})
        await store.aput((root,), "b", {"title": "tax report", "body": "penguins colony"}, index=["title"])
        assert (await store.asearch((root,), query="penguins colony"))[0].key == "a"
        assert (await store.asearch((root,), query="tax report"))[0].key == "b"
    finally:
        await store.aclose()


async def test_list_namespaces_by_prefix_suffix_wildcard_depth_and_page(store: TaskmemStore) -> None:
    root = fresh()
    for path in [(root, "users", "u1", "memories"), (root, "users", "u2", "memories"), (root, "users", "u2", "prefs"),
                 (root, "docs", "d1")]:
        await store.aput(path, "k", {"v": 1})
    assert await store.alist_namespaces(prefix=(root, "users")) == [
        (root, "users", "u1", "memories"), (root, "users", "u2", "memories"), (root, "users", "u2", "prefs")]
    assert await store.alist_namespaces(prefix=(root,), suffix=("memories",)) == [
        (root, "users", "u1", "memories"), (root, "users", "u2", "memories")]
    assert await store.alist_namespaces(prefix=(root, "*", "u2")) == [
        (root, "users", "u2", "memories"), (root, "users", "u2", "prefs")]
    assert await store.alist_namespaces(prefix=(root,), max_depth=2) == [(root, "docs"), (root, "users")]
    assert await store.alist_namespaces(prefix=(root,), limit=2, offset=1) == [
        (root, "users", "u1", "memories"), (root, "users", "u2", "memories")]
    results = await store.abatch([ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("*", "prefs")),),
                                                   max_depth=None, limit=10, offset=0)])
    assert (root, "users", "u2", "prefs") in results[0]


async def test_a_batch_answers_in_op_order_and_sees_its_own_earlier_puts(store: TaskmemStore) -> None:
    root = fresh()
    results = await store.abatch([
        PutOp((root,), "a", {"v": 1}), GetOp((root,), "a"), GetOp((root,), "missing"),
        SearchOp((root,), None, 10, 0), PutOp((root,), "a", None), GetOp((root,), "a")])
    assert results[0] is None and results[1] is not None and results[1].value == {"v": 1}
    assert results[2] is None and [i.key for i in results[3]] == ["a"] and results[5] is None


async def test_an_items_ttl_is_refreshed_by_a_read_that_asks_and_not_by_one_that_does_not(
        store_server: ServerProcess) -> None:
    root = fresh()
    store = TaskmemStore(store_server.address, ttl={"default_ttl": 10, "refresh_on_read": True})
    try:
        await store.aput((root,), "k", {"v": 1})
        async with grpc.aio.insecure_channel(store_server.address) as channel:
            memory = memory_service_pb2_grpc.MemoryServiceStub(channel)

            async def expiry() -> int:
                found = await memory.GetStoreItems(mpb.GetStoreItemsRequest(keys=[mpb.StoreItemKey(path=[root], key="k")]))
                item = found.items[0]
                assert item.ttl.seconds == 600
                return item.expire_time.ToMicroseconds()

            put_expiry = await expiry()
            await asyncio.sleep(0.05)
            await store.aget((root,), "k", refresh_ttl=False)
            assert await expiry() == put_expiry
            await store.aget((root,), "k")
            refreshed = await expiry()
            assert refreshed > put_expiry
            await asyncio.sleep(0.05)
            await store.asearch((root,))
            assert await expiry() > refreshed
    finally:
        await store.aclose()


async def test_an_item_past_its_ttl_is_gone(store: TaskmemStore) -> None:
    root = fresh()
    await store.aput((root,), "short", {"v": 1}, ttl=1 / 60)  # one second
    await store.aput((root,), "kept", {"v": 2})
    await asyncio.sleep(1.5)
    assert await store.aget((root,), "short") is None
    assert [i.key for i in await store.asearch((root,))] == ["kept"]
    assert await store.alist_namespaces(prefix=(root,)) == [(root,)]


def test_the_sync_methods_work_from_a_thread_with_no_loop(store_server: ServerProcess) -> None:
    root = fresh()
    store = TaskmemStore(store_server.address)
    try:
        store.put((root,), "k", {"v": [1, 2]})
        assert store.get((root,), "k").value == {"v": [1, 2]}  # type: ignore[union-attr]
        assert [i.key for i in store.search((root,))] == ["k"]
        assert store.list_namespaces(prefix=(root,)) == [(root,)]
    finally:
        store.close()
