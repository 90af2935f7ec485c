"""TaskmemSaver: a LangGraph checkpointer (BaseCheckpointSaver) on taskmem's CheckpointService.

    from taskmem_langgraph import TaskmemSaver
    graph = builder.compile(checkpointer=TaskmemSaver("127.0.0.1:50051"))

Each LangGraph thread is a taskmem task (the thread id of an existing task, the task named by
`configurable.taskmem_task_id` or the saver's task_id, else a new one): every checkpoint and batch of
writes is an event of that task, a step in its web view, kept under the namespace's retention, and
copy_thread forks the task. Values go through the saver's serde (serde.dumps_typed) and are stored as the
(type, bytes) it returns, byte for byte; metadata is stored as JSON, as LangGraph's own savers store it.

Async methods are the implementation; the sync ones run them on a private loop thread.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

import grpc
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple,
    get_checkpoint_id, get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from taskmem.v1 import checkpoint_pb2, checkpoint_service_pb2 as pb, checkpoint_service_pb2_grpc
from taskmem_client import TaskmemClient, TaskmemError
from taskmem_langgraph.connection import Connection
from taskmem_langgraph.loop_thread import LoopThread

# ListCheckpoints' largest page.
PAGE_MAX = 100
_STRATEGIES = {"keep_latest": checkpoint_pb2.CHECKPOINT_PRUNE_STRATEGY_KEEP_LATEST,
               "delete": checkpoint_pb2.CHECKPOINT_PRUNE_STRATEGY_DELETE}
# At most this many thread or run ids per call (the server's limit).
_IDS_PER_CALL = 100


class TaskmemSaver(BaseCheckpointSaver[str]):
    """Checkpoints in taskmem. Give an address (and token, namespace, tls: TaskmemClient's arguments) or a
    TaskmemClient; task_id attaches every new thread to that task instead of one task per thread."""

    def __init__(self, address: str | None = None, *, client: TaskmemClient | None = None, task_id: str = "",
                 serde: SerializerProtocol | None = None, **client_settings: Any) -> None:
        super().__init__(serde=serde)
        if address is not None:
            client_settings["address"] = address
        self._connection = Connection(client, client_settings)
        self._sync = LoopThread("taskmem-langgraph-saver")
        self.task_id = task_id

    def _stub(self) -> checkpoint_service_pb2_grpc.CheckpointServiceAsyncStub:
        stub: checkpoint_service_pb2_grpc.CheckpointServiceAsyncStub = checkpoint_service_pb2_grpc.CheckpointServiceStub(
            self._connection.client().channel)
        return stub

    async def aclose(self) -> None:
        """Close the client this saver made for the running loop."""
        await self._connection.close()

    def close(self) -> None:
        """Close the private loop's client and stop the loop."""
        if self._sync.started:
            self._sync.run(self._connection.close())
        self._sync.close()

    # --- async (the implementation) ------------------------------------------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        configurable = config["configurable"]
        request = pb.GetCheckpointRequest(thread_id=str(configurable["thread_id"]),
                                          checkpoint_ns=configurable.get("checkpoint_ns", ""),
                                          checkpoint_id=get_checkpoint_id(config) or "")
        try:
            response = await self._stub().GetCheckpoint(request)
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return self._tuple(response.checkpoint)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        configurable = (config or {}).get("configurable", {})
        if checkpoint_id := get_checkpoint_id(config) if config else None:
            found = await self.aget_tuple(config)  # type: ignore[arg-type]
            before_id = get_checkpoint_id(before) if before else None
            if found is not None and _matches(found.metadata, filter or {}) and (
                    before_id is None or checkpoint_id < before_id) and limit != 0:
                yield found
            return
        request = pb.ListCheckpointsRequest(thread_id=str(configurable.get("thread_id", "") or ""),
                                            before_checkpoint_id=(get_checkpoint_id(before) or "") if before else "")
        if "checkpoint_ns" in configurable:
            request.checkpoint_ns = configurable["checkpoint_ns"]
        if filter:
            request.metadata_filter.update(filter)
        remaining = limit
        while remaining is None or remaining > 0:
            request.page_size = PAGE_MAX if remaining is None else min(remaining, PAGE_MAX)
            page = await self._stub().ListCheckpoints(request)
            for message in page.checkpoints:
                yield self._tuple(message)
            if remaining is not None:
                remaining -= len(page.checkpoints)
            if not page.next_page_token:
                return
            request.page_token = page.next_page_token

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        configurable = config["configurable"]
        thread_id, checkpoint_ns = str(configurable["thread_id"]), configurable.get("checkpoint_ns", "")
        value_type, data = self.serde.dumps_typed(checkpoint)
        message = checkpoint_pb2.Checkpoint(
            thread_id=thread_id, checkpoint_ns=checkpoint_ns, checkpoint_id=checkpoint["id"],
            parent_checkpoint_id=configurable.get("checkpoint_id") or "",
            value=checkpoint_pb2.SerializedValue(type=value_type, data=data),
            metadata_json=json.dumps(get_serializable_checkpoint_metadata(config, metadata), ensure_ascii=False))
        await self._stub().PutCheckpoint(pb.PutCheckpointRequest(
            checkpoint=message, task_id=configurable.get("taskmem_task_id") or self.task_id))
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                                 "checkpoint_id": checkpoint["id"]}}

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        if not writes:
            return
        configurable = config["configurable"]
        messages = []
        for position, (channel, value) in enumerate(writes):
            value_type, data = self.serde.dumps_typed(value)
            messages.append(checkpoint_pb2.PendingWrite(
                graph_task_id=task_id, idx=WRITES_IDX_MAP.get(channel, position), channel=channel,
                value=checkpoint_pb2.SerializedValue(type=value_type, data=data), graph_task_path=task_path))
        await self._stub().PutCheckpointWrites(pb.PutCheckpointWritesRequest(
            thread_id=str(configurable["thread_id"]), checkpoint_ns=configurable.get("checkpoint_ns", ""),
            checkpoint_id=configurable["checkpoint_id"], writes=messages))

    async def adelete_thread(self, thread_id: str) -> None:
        await self._stub().DeleteCheckpointThread(pb.DeleteCheckpointThreadRequest(thread_id=str(thread_id)))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        ids = [str(run_id) for run_id in run_ids]
        for start in range(0, len(ids), _IDS_PER_CALL):
            await self._stub().DeleteCheckpointRuns(pb.DeleteCheckpointRunsRequest(
                run_ids=ids[start:start + _IDS_PER_CALL]))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy the thread; a new target thread's task is a fork of the source's task. A source with no
        checkpoints copies nothing."""
        try:
            await self._stub().CopyCheckpointThread(pb.CopyCheckpointThreadRequest(
                source_thread_id=str(source_thread_id), target_thread_id=str(target_thread_id)))
        except TaskmemError as error:
            if error.code() != grpc.StatusCode.NOT_FOUND:
                raise

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        if strategy not in _STRATEGIES:
            raise ValueError(f"strategy must be one of {sorted(_STRATEGIES)}, not {strategy!r}")
        ids = [str(thread_id) for thread_id in thread_ids]
        for start in range(0, len(ids), _IDS_PER_CALL):
            await self._stub().PruneCheckpoints(pb.PruneCheckpointsRequest(
                thread_ids=ids[start:start + _IDS_PER_CALL], strategy=_STRATEGIES[strategy]))

    async def atask_of(self, thread_id: str) -> str | None:
        """The taskmem task the thread belongs to (its record, events and web page); None before its first
        checkpoint."""
        try:
            found = await self._stub().ListCheckpoints(pb.ListCheckpointsRequest(
                thread_id=str(thread_id), page_size=1, omit_values=True))
        except TaskmemError as error:
            if error.code() == grpc.StatusCode.NOT_FOUND:
                return None
            raise
        return found.checkpoints[0].task_id if found.checkpoints else None

    # --- sync (the async methods on the private loop) ------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._sync.run(self.aget_tuple(config))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        found = self.alist(config, filter=filter, before=before, limit=limit)
        try:
            while True:
                try:
                    yield self._sync.run(anext(found))  # type: ignore[arg-type]
                except StopAsyncIteration:
                    return
        finally:
            self._sync.run(found.aclose())

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._sync.run(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        self._sync.run(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._sync.run(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._sync.run(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._sync.run(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._sync.run(self.aprune(thread_ids, strategy=strategy))

    def task_of(self, thread_id: str) -> str | None:
        return self._sync.run(self.atask_of(thread_id))

    # --- versions and conversion ---------------------------------------------------------------

    def get_next_version(self, current: str | None, channel: None) -> str:
        """As LangGraph's PostgreSQL saver: a zero-padded counter, then a random tie-breaker."""
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

    def _tuple(self, message: checkpoint_pb2.Checkpoint) -> CheckpointTuple:
        def configured(checkpoint_id: str) -> RunnableConfig:
            return {"configurable": {"thread_id": message.thread_id, "checkpoint_ns": message.checkpoint_ns,
                                     "checkpoint_id": checkpoint_id}}

        return CheckpointTuple(
            config=configured(message.checkpoint_id),
            checkpoint=self.serde.loads_typed((message.value.type, message.value.data)),
            metadata=json.loads(message.metadata_json) if message.metadata_json else {},
            parent_config=configured(message.parent_checkpoint_id) if message.parent_checkpoint_id else None,
            pending_writes=[(w.graph_task_id, w.channel, self.serde.loads_typed((w.value.type, w.value.data)))
                            for w in message.pending_writes])


def _matches(metadata: CheckpointMetadata, wanted: dict[str, Any]) -> bool:
    return all(key in metadata and metadata[key] == value for key, value in wanted.items())  # type: ignore[literal-required]
