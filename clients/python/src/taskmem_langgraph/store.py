"""TaskmemStore: LangGraph's long-term memory store (BaseStore) on taskmem's MemoryService store items.

    from taskmem_langgraph import TaskmemStore
    graph = builder.compile(checkpointer=..., store=TaskmemStore("127.0.0.1:50051"))

A namespace tuple is an item path in the caller's taskmem namespace; each indexed item is also a memory
entry of the namespace's store task, tagged by its path, so `search(..., query=...)` runs the archive's
HYBRID search (full text, and semantic when the server has embeddings: the server embeds, so an IndexConfig's
`embed` and `dims` are not used, only its `fields`). Without an index config every item is indexed as its
whole JSON value; `index=False` on a put leaves it out of query search (it is still listed after the found
items, as LangGraph's in-memory store does with unembedded items). TTLs are minutes, as the base class says;
reads refresh them when asked (TTLConfig.refresh_on_read, default true).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2
from langgraph.store.base import (
    BaseStore, GetOp, IndexConfig, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp, TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path

from taskmem.v1 import memory_pb2, memory_service_pb2 as pb, memory_service_pb2_grpc
from taskmem_client import TaskmemClient
from taskmem_langgraph.connection import Connection
from taskmem_langgraph.loop_thread import LoopThread

# The server's most writes or keys per call.
_PER_CALL = 100
_MATCH_TYPES = {"prefix": memory_pb2.STORE_NAMESPACE_MATCH_TYPE_PREFIX,
                "suffix": memory_pb2.STORE_NAMESPACE_MATCH_TYPE_SUFFIX}


class TaskmemStore(BaseStore):
    supports_ttl = True

    def __init__(self, address: str | None = None, *, client: TaskmemClient | None = None,
                 index: IndexConfig | None = None, ttl: TTLConfig | None = None, task_id: str = "",
                 **client_settings: Any) -> None:
        if address is not None:
            client_settings["address"] = address
        self._connection = Connection(client, client_settings)
        self._sync = LoopThread("taskmem-langgraph-store")
        self.index_config = index
        self.ttl_config = ttl
        self.task_id = task_id
        self._fields = list((index or {}).get("fields") or ["$"])

    def _stub(self) -> memory_service_pb2_grpc.MemoryServiceAsyncStub:
        stub: memory_service_pb2_grpc.MemoryServiceAsyncStub = memory_service_pb2_grpc.MemoryServiceStub(
            self._connection.client().channel)
        return stub

    async def aclose(self) -> None:
        await self._connection.close()

    def close(self) -> None:
        if self._sync.started:
            self._sync.run(self._connection.close())
        self._sync.close()

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._sync.run(self.abatch(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """The ops in order, one call per op, consecutive puts and gets each in one call; results in op order."""
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = [None] * len(ops)
        position = 0
        while position < len(ops):
            op = ops[position]
            run = _same_kind_run(ops, position) if isinstance(op, (PutOp, GetOp)) else 1
            if isinstance(op, PutOp):
                await self._put([o for o in ops[position:position + run]])  # type: ignore[misc]
            elif isinstance(op, GetOp):
                for offset, item in enumerate(await self._get(ops[position:position + run])):  # type: ignore[arg-type]
                    results[position + offset] = item
            elif isinstance(op, SearchOp):
                results[position] = await self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[position] = await self._list_namespaces(op)
            else:
                raise ValueError(f"unknown operation {type(op).__name__}")
            position += run
        return results

    async def _put(self, ops: Sequence[PutOp]) -> None:
        writes = [self._write(op) for op in ops]
        for start in range(0, len(writes), _PER_CALL):
            await self._stub().PutStoreItems(pb.PutStoreItemsRequest(writes=writes[start:start + _PER_CALL],
                                                                     task_id=self.task_id))

    def _write(self, op: PutOp) -> pb.StoreItemWrite:
        write = pb.StoreItemWrite(path=list(op.namespace), key=str(op.key))
        if op.value is None:
            return write
        write.value_json = json.dumps(op.value, ensure_ascii=False)
        if op.ttl is not None:
            write.ttl.CopyFrom(_minutes(op.ttl))
        if op.index is not False:
            fields = self._fields if op.index is None else list(op.index)
            write.index_text = "\n".join(text for field in fields for text in get_text_at_path(op.value, field))
        return write

    async def _get(self, ops: Sequence[GetOp]) -> list[Item | None]:
        found: dict[tuple[tuple[str, ...], str], Item] = {}
        for refresh in (False, True):  # the two kinds of read, each in one call
            keys = [op for op in ops if self._refresh(op.refresh_ttl) is refresh]
            for start in range(0, len(keys), _PER_CALL):
                response = await self._stub().GetStoreItems(pb.GetStoreItemsRequest(
                    keys=[pb.StoreItemKey(path=list(op.namespace), key=str(op.key))
                          for op in keys[start:start + _PER_CALL]], refresh_ttl=refresh))
                for message in response.items:
                    found[(tuple(message.path), message.key)] = _item(message)
        return [found.get((tuple(op.namespace), str(op.key))) for op in ops]

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        response = await self._stub().SearchStoreItems(pb.SearchStoreItemsRequest(
            path_prefix=list(op.namespace_prefix), filter_json=json.dumps(op.filter) if op.filter else "",
            query=op.query or "", limit=op.limit, offset=op.offset, refresh_ttl=self._refresh(op.refresh_ttl)))
        return [_search_item(hit) for hit in response.hits]

    async def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        response = await self._stub().ListStoreNamespaces(pb.ListStoreNamespacesRequest(
            matches=[memory_pb2.StoreNamespaceMatch(match_type=_MATCH_TYPES[c.match_type], labels=list(c.path))
                     for c in op.match_conditions or ()],
            max_depth=op.max_depth or 0, limit=op.limit, offset=op.offset))
        return [tuple(namespace.path) for namespace in response.namespaces]

    def _refresh(self, asked: bool) -> bool:
        return bool(asked) and (self.ttl_config or {}).get("refresh_on_read", True)


def _same_kind_run(ops: Sequence[Op], start: int) -> int:
    kind = type(ops[start])
    end = start
    while end < len(ops) and type(ops[end]) is kind:
        end += 1
    return end - start


def _minutes(minutes: float) -> duration_pb2.Duration:
    micros = int(minutes * 60_000_000)
    return duration_pb2.Duration(seconds=micros // 1_000_000, nanos=micros % 1_000_000 * 1000)


def _time(stamp: timestamp_pb2.Timestamp) -> datetime:
    return datetime.fromtimestamp(stamp.seconds + stamp.nanos / 1e9, tz=timezone.utc)


def _item(message: memory_pb2.StoreItem) -> Item:
    return Item(value=json.loads(message.value_json), key=message.key, namespace=tuple(message.path),
                created_at=_time(message.create_time), updated_at=_time(message.update_time))


def _search_item(hit: memory_pb2.StoreItemHit) -> SearchItem:
    message = hit.item
    return SearchItem(namespace=tuple(message.path), key=message.key, value=json.loads(message.value_json),
                      created_at=_time(message.create_time), updated_at=_time(message.update_time),
                      score=hit.score if hit.HasField("score") else None)
