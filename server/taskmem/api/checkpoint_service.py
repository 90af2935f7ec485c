"""CheckpointService: validate the request, call the checkpoint engine, convert the result."""

from __future__ import annotations

import grpc

from taskmem.api import checkpoint_convert as convert
from taskmem.api import task_convert, validate
from taskmem.api.idempotent import write_once
from taskmem.api.scope import current_scope
from taskmem.checkpoints.engine import NAME_MAX, CheckpointEngine
from taskmem.core import paging
from taskmem.core.checkpoints import PruneStrategy
from taskmem.core.errors import InvalidArgument
from taskmem.store.access import Transaction
from taskmem.v1 import checkpoint_pb2, checkpoint_service_pb2 as pb, checkpoint_service_pb2_grpc

PAGE_MAX, IDS_MAX = 100, 100
_STRATEGIES = {checkpoint_pb2.CHECKPOINT_PRUNE_STRATEGY_UNSPECIFIED: PruneStrategy.KEEP_LATEST,
               checkpoint_pb2.CHECKPOINT_PRUNE_STRATEGY_KEEP_LATEST: PruneStrategy.KEEP_LATEST,
               checkpoint_pb2.CHECKPOINT_PRUNE_STRATEGY_DELETE: PruneStrategy.DELETE}


def _ids(field: str, values: list[str]) -> list[str]:
    validate.count(field, values, IDS_MAX, required=True)
    return sorted({convert.ident(f"{field}[{i}]", value) for i, value in enumerate(values)})


class CheckpointService(checkpoint_service_pb2_grpc.CheckpointServiceServicer):
    def __init__(self, engine: CheckpointEngine) -> None:
        self._engine = engine

    async def PutCheckpoint(self, request: pb.PutCheckpointRequest,
                            context: grpc.aio.ServicerContext) -> pb.PutCheckpointResponse:
        checkpoint = convert.new_checkpoint(request.checkpoint)
        task_id = validate.identifier("task_id", request.task_id, required=False)
        scope = current_scope()
        stored = await self._engine.storage.write(lambda tx: self._engine.put(tx, checkpoint, task_id),
                                                  scope.namespace, scope.correlation_id)
        return pb.PutCheckpointResponse(checkpoint=convert.checkpoint(stored, with_value=False))

    async def PutCheckpointWrites(self, request: pb.PutCheckpointWritesRequest,
                                  context: grpc.aio.ServicerContext) -> pb.PutCheckpointWritesResponse:
        thread_id = convert.ident("thread_id", request.thread_id)
        checkpoint_ns = convert.ident("checkpoint_ns", request.checkpoint_ns, required=False)
        checkpoint_id = convert.ident("checkpoint_id", request.checkpoint_id)
        writes = convert.new_writes("writes", list(request.writes))
        scope = current_scope()
        stored = await self._engine.put_writes(scope.namespace, scope.correlation_id, thread_id, checkpoint_ns,
                                               checkpoint_id, writes)
        return pb.PutCheckpointWritesResponse(stored_count=stored)

    async def GetCheckpoint(self, request: pb.GetCheckpointRequest,
                            context: grpc.aio.ServicerContext) -> pb.GetCheckpointResponse:
        found = await self._engine.get(
            current_scope().namespace, convert.ident("thread_id", request.thread_id),
            convert.ident("checkpoint_ns", request.checkpoint_ns, required=False),
            convert.ident("checkpoint_id", request.checkpoint_id, required=False))
        return pb.GetCheckpointResponse(checkpoint=convert.checkpoint(found))

    async def ListCheckpoints(self, request: pb.ListCheckpointsRequest,
                              context: grpc.aio.ServicerContext) -> pb.ListCheckpointsResponse:
        if not 0 <= request.page_size <= PAGE_MAX:
            raise InvalidArgument("page_size", f"must be 0..{PAGE_MAX}")
        size = request.page_size or PAGE_MAX
        query = dict(
            thread_id=convert.ident("thread_id", request.thread_id, required=False),
            checkpoint_ns=(convert.ident("checkpoint_ns", request.checkpoint_ns, required=False)
                           if request.HasField("checkpoint_ns") else None),
            task_id=validate.identifier("task_id", request.task_id, required=False),
            before=convert.ident("before_checkpoint_id", request.before_checkpoint_id, required=False),
            metadata_filter=validate.struct("metadata_filter", request.metadata_filter,
                                            request.HasField("metadata_filter")),
            omit_values=request.omit_values)
        scope = current_scope()
        bound = [scope.namespace, query["thread_id"], query["checkpoint_ns"], query["task_id"], query["before"],
                 query["metadata_filter"], query["omit_values"]]
        after = paging.decode_token(request.page_token, bound, (str, str, str))
        rows = await self._engine.list(scope.namespace, after, size + 1, **query)
        page, token = paging.page_of(rows, size, lambda c: [c.checkpoint_id, c.thread_id, c.checkpoint_ns], bound)
        return pb.ListCheckpointsResponse(
            checkpoints=[convert.checkpoint(c, with_value=not request.omit_values) for c in page],
            next_page_token=token)

    async def DeleteCheckpointThread(self, request: pb.DeleteCheckpointThreadRequest,
                                     context: grpc.aio.ServicerContext) -> pb.DeleteCheckpointThreadResponse:
        thread_id = convert.ident("thread_id", request.thread_id)
        scope = current_scope()
        count = await self._engine.delete_thread(scope.namespace, scope.correlation_id, thread_id)
        return pb.DeleteCheckpointThreadResponse(deleted_count=count)

    async def DeleteCheckpointRuns(self, request: pb.DeleteCheckpointRunsRequest,
                                   context: grpc.aio.ServicerContext) -> pb.DeleteCheckpointRunsResponse:
        run_ids = _ids("run_ids", list(request.run_ids))
        scope = current_scope()
        count = await self._engine.delete_runs(scope.namespace, scope.correlation_id, run_ids)
        return pb.DeleteCheckpointRunsResponse(deleted_count=count)

    async def CopyCheckpointThread(self, request: pb.CopyCheckpointThreadRequest,
                                   context: grpc.aio.ServicerContext) -> pb.CopyCheckpointThreadResponse:
        source = convert.ident("source_thread_id", request.source_thread_id)
        target = convert.ident("target_thread_id", request.target_thread_id)
        up_to = convert.ident("checkpoint_id", request.checkpoint_id, required=False)
        name = validate.text("name", request.name, NAME_MAX)

        def copy(tx: Transaction) -> pb.CopyCheckpointThreadResponse:
            task, count = self._engine.copy(tx, source, target, up_to, name)
            return pb.CopyCheckpointThreadResponse(task=task_convert.task(task), copied_count=count)

        return await write_once(self._engine.storage, request, pb.CopyCheckpointThreadResponse, copy)

    async def PruneCheckpoints(self, request: pb.PruneCheckpointsRequest,
                               context: grpc.aio.ServicerContext) -> pb.PruneCheckpointsResponse:
        thread_ids = _ids("thread_ids", list(request.thread_ids))
        strategy = _STRATEGIES.get(request.strategy)
        if strategy is None:
            raise InvalidArgument("strategy", f"unknown value {request.strategy}")
        scope = current_scope()
        count = await self._engine.prune(scope.namespace, scope.correlation_id, thread_ids, strategy)
        return pb.PruneCheckpointsResponse(deleted_count=count)
