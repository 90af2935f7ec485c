"""MemoryService: validate the request, call the memory archive or store, convert the result."""

from __future__ import annotations

import grpc

from taskmem.api import memory_convert as mconvert
from taskmem.api import memory_requests
from taskmem.api import store_item_convert as sconvert
from taskmem.api import validate
from taskmem.api.idempotent import earlier_response, write_once
from taskmem.api.list_page import SortKey, list_page
from taskmem.api.scope import current_scope
from taskmem.core import store_items
from taskmem.core.artifacts import checked_digest
from taskmem.core.errors import InvalidArgument
from taskmem.core.memory import MemoryEntry
from taskmem.memory.archive import MemoryArchive, store_extraction
from taskmem.memory.store_items import StoreItems
from taskmem.store.memory import artifacts as artifact_store
from taskmem.store.memory import episodes as episode_store
from taskmem.store.memory import knowledge as knowledge_store
from taskmem.store.memory import memory_entries
from taskmem.store.memory import patterns as pattern_store
from taskmem.store.access import Reader, Transaction
from taskmem.v1 import memory_service_pb2 as pb
from taskmem.v1 import memory_service_pb2_grpc


def _relevant(db: Reader, namespace: str, task_id: str, subtask_id: str, limit: int) -> list[MemoryEntry]:
    episode_store.require_task(db, namespace, task_id)
    return memory_entries.relevant_entries(db, namespace, task_id, subtask_id, limit)


class MemoryService(memory_service_pb2_grpc.MemoryServiceServicer):
    def __init__(self, archive: MemoryArchive) -> None:
        self._archive = archive
        self._storage = archive.storage
        self._store_items = StoreItems(archive)

    # --- memory entries ---------------------------------------------------------------------

    async def AddMemoryEntries(self, request: pb.AddMemoryEntriesRequest,
                               context: grpc.aio.ServicerContext) -> pb.AddMemoryEntriesResponse:
        entries = memory_requests.new_entries(request)

        def add(tx: Transaction) -> pb.AddMemoryEntriesResponse:
            # queued for the background embedding
            stored = memory_entries.insert_memory_entries(tx, entries, retention=self._archive.retention)
            return pb.AddMemoryEntriesResponse(entries=[mconvert.memory_entry(e) for e in stored])

        response = await write_once(self._storage, request, pb.AddMemoryEntriesResponse, add)
        self._archive.entries_written()
        return response

    async def QueryMemoryEntries(self, request: pb.QueryMemoryEntriesRequest,
                                 context: grpc.aio.ServicerContext) -> pb.QueryMemoryEntriesResponse:
        f = memory_requests.memory_filter("filter", request.filter)
        page, token = await list_page(
            request, [f.key()], SortKey((int, int), lambda e: [e.created_at, e.seq]),
            lambda after, limit: self._storage.read(memory_entries.query_entries, current_scope().namespace, f, limit,
                                                    (after[0], after[1]) if after else None))
        return pb.QueryMemoryEntriesResponse(entries=[mconvert.memory_entry(e) for e in page], next_page_token=token)

    async def GetRelevantMemories(self, request: pb.GetRelevantMemoriesRequest,
                                  context: grpc.aio.ServicerContext) -> pb.GetRelevantMemoriesResponse:
        task_id, subtask_id, limit = memory_requests.relevant(request)
        found = await self._storage.read(_relevant, current_scope().namespace, task_id, subtask_id, limit)
        return pb.GetRelevantMemoriesResponse(entries=[mconvert.memory_entry(e) for e in found])

    async def SearchMemories(self, request: pb.SearchMemoriesRequest,
                             context: grpc.aio.ServicerContext) -> pb.SearchMemoriesResponse:
        s = memory_requests.search(request)
        wait = memory_requests.embedding_wait(request, context.time_remaining())
        as_of = validate.as_of("as_of", request.as_of, request.HasField("as_of"))
        found = await self._archive.search(current_scope().namespace, s.query, s.mode, s.filter, s.limit, wait,
                                           s.recency, as_of, request.include_history, request.spread_hits)
        return pb.SearchMemoriesResponse(
            hits=[mconvert.search_hit(hit, entry, hit.seq in found.unembedded_hits, found.superseded.get(entry.id))
                  for hit, entry in found.hits],
            mode=mconvert.search_mode(found.mode), unembedded_count=found.unembedded_count)

    async def ExtractMemories(self, request: pb.ExtractMemoriesRequest,
                              context: grpc.aio.ServicerContext) -> pb.ExtractMemoriesResponse:
        x = memory_requests.extraction(request)
        # A retry with the same request_id must not call the model again.
        earlier = await earlier_response(self._storage, request, pb.ExtractMemoriesResponse)
        if earlier is not None:
            return earlier
        result = await self._archive.extract(current_scope().namespace, x.task_id, x.subtask_id, x.tool_calls,
                                             x.model_output)

        def store(tx: Transaction) -> pb.ExtractMemoriesResponse:
            stored = store_extraction(tx, result.entries, x.subtask_id, len(result.dropped), result.candidates,
                                      x.task_id, self._archive.retention)
            return pb.ExtractMemoriesResponse(
                entries=[mconvert.memory_entry(e) for e in stored], candidate_count=result.candidates,
                dropped=[pb.DroppedMemory(index=d.index, reason=d.reason, candidate=d.candidate)
                         for d in result.dropped], parse_error=result.parse_error)

        response = await write_once(self._storage, request, pb.ExtractMemoriesResponse, store)
        self._archive.entries_written()
        return response

    # --- project knowledge ------------------------------------------------------------------

    async def UpsertKnowledge(self, request: pb.UpsertKnowledgeRequest,
                              context: grpc.aio.ServicerContext) -> pb.UpsertKnowledgeResponse:
        w = memory_requests.knowledge_write(request)

        def upsert(tx: Transaction) -> pb.UpsertKnowledgeResponse:
            knowledge, outcome = knowledge_store.upsert(tx, w.category, w.key, w.value, w.source, w.confidence)
            return pb.UpsertKnowledgeResponse(knowledge=mconvert.knowledge(knowledge), outcome=outcome.value)

        return await write_once(self._storage, request, pb.UpsertKnowledgeResponse, upsert)

    async def GetKnowledge(self, request: pb.GetKnowledgeRequest,
                           context: grpc.aio.ServicerContext) -> pb.GetKnowledgeResponse:
        namespace = current_scope().namespace
        if request.id:
            found = await self._storage.read(knowledge_store.get, namespace, validate.identifier("id", request.id))
        else:
            category = memory_requests.category("category", request.category, required=False)
            if category is None:
                raise InvalidArgument("id", "send id, or category and key")
            key = memory_requests.knowledge_key("key", request.key)
            found = await self._storage.read(knowledge_store.get_by_key, namespace, category, key)
        return pb.GetKnowledgeResponse(knowledge=mconvert.knowledge(found))

    async def QueryKnowledge(self, request: pb.QueryKnowledgeRequest,
                             context: grpc.aio.ServicerContext) -> pb.QueryKnowledgeResponse:
        category = memory_requests.category("category", request.category, required=False)
        key_prefix = validate.text("key_prefix", request.key_prefix, memory_requests.KEY_MAX)
        text = validate.text("text", request.text, memory_requests.TEXT_FILTER_MAX)
        as_of = validate.as_of("as_of", request.as_of, request.HasField("as_of"))
        page, token = await list_page(
            request, [category, key_prefix, text, request.as_of.SerializeToString().hex(), request.include_history],
            SortKey((str, str), lambda k: [k.category.value, k.key]),
            lambda after, limit: self._storage.read(knowledge_store.query_as_of, current_scope().namespace, category,
                                                    key_prefix, text, limit, after, as_of, request.include_history))
        return pb.QueryKnowledgeResponse(knowledge=[mconvert.knowledge(k) for k in page], next_page_token=token)

    async def DeleteKnowledge(self, request: pb.DeleteKnowledgeRequest,
                              context: grpc.aio.ServicerContext) -> pb.DeleteKnowledgeResponse:
        knowledge_id = validate.identifier("id", request.id)

        def delete(tx: Transaction) -> pb.DeleteKnowledgeResponse:
            knowledge_store.delete(tx, knowledge_id)
            return pb.DeleteKnowledgeResponse()

        return await write_once(self._storage, request, pb.DeleteKnowledgeResponse, delete)

    # --- episodes ---------------------------------------------------------------------------

    async def RecordEpisode(self, request: pb.RecordEpisodeRequest,
                            context: grpc.aio.ServicerContext) -> pb.RecordEpisodeResponse:
        e = memory_requests.episode(request)

        def record(tx: Transaction) -> pb.RecordEpisodeResponse:
            expires_at = self._archive.retention.episode_expiry(tx.namespace, e.expires_at, e.pinned, tx.now)
            stored = episode_store.record(tx, e.task_id, e.agent_id, e.action, e.approach, e.outcome, e.duration_us,
                                          e.tokens_in, e.tokens_out, expires_at)
            return pb.RecordEpisodeResponse(episode=mconvert.episode(stored))

        return await write_once(self._storage, request, pb.RecordEpisodeResponse, record)

    async def ListEpisodes(self, request: pb.ListEpisodesRequest,
                           context: grpc.aio.ServicerContext) -> pb.ListEpisodesResponse:
        task_id = validate.identifier("task_id", request.task_id, required=False)
        agent_id = validate.text("agent_id", request.agent_id, memory_requests.AGENT_MAX)
        action = memory_requests.episode_action(request.action)
        page, token = await list_page(
            request, [task_id, agent_id, action, request.include_archived],
            SortKey((int, str), lambda e: [e.created_at, e.id]),
            lambda after, limit: self._storage.read(episode_store.list_episodes, current_scope().namespace, task_id,
                                                    agent_id, action, limit, after, request.include_archived))
        return pb.ListEpisodesResponse(episodes=[mconvert.episode(e) for e in page], next_page_token=token)

    # --- artifacts --------------------------------------------------------------------------

    async def RegisterArtifact(self, request: pb.RegisterArtifactRequest,
                               context: grpc.aio.ServicerContext) -> pb.RegisterArtifactResponse:
        a = memory_requests.artifact(request)
        sha256, size = checked_digest(a.content, a.sha256, a.size_bytes)

        def register(tx: Transaction) -> pb.RegisterArtifactResponse:
            stored = artifact_store.register(tx, a.task_id, a.agent_id, a.type, a.path, a.description, size, sha256)
            return pb.RegisterArtifactResponse(artifact=mconvert.artifact(stored))

        return await write_once(self._storage, request, pb.RegisterArtifactResponse, register)

    async def ListArtifacts(self, request: pb.ListArtifactsRequest,
                            context: grpc.aio.ServicerContext) -> pb.ListArtifactsResponse:
        task_id = validate.identifier("task_id", request.task_id, required=False)
        kind = memory_requests.artifact_type(request.type)
        path_prefix = validate.text("path_prefix", request.path_prefix, memory_requests.PATH_MAX)
        page, token = await list_page(
            request, [task_id, kind, path_prefix], SortKey((int, str), lambda a: [a.created_at, a.id]),
            lambda after, limit: self._storage.read(artifact_store.list_artifacts, current_scope().namespace, task_id,
                                                    kind, path_prefix, limit, after))
        return pb.ListArtifactsResponse(artifacts=[mconvert.artifact(a) for a in page], next_page_token=token)

    async def DeleteArtifact(self, request: pb.DeleteArtifactRequest,
                             context: grpc.aio.ServicerContext) -> pb.DeleteArtifactResponse:
        artifact_id = validate.identifier("id", request.id)

        def delete(tx: Transaction) -> pb.DeleteArtifactResponse:
            artifact_store.delete(tx, artifact_id)
            return pb.DeleteArtifactResponse()

        return await write_once(self._storage, request, pb.DeleteArtifactResponse, delete)

    # --- learned patterns -------------------------------------------------------------------

    async def RecordPattern(self, request: pb.RecordPatternRequest,
                            context: grpc.aio.ServicerContext) -> pb.RecordPatternResponse:
        pattern_type, pattern_key, data = memory_requests.pattern(request)

        def record(tx: Transaction) -> pb.RecordPatternResponse:
            return pb.RecordPatternResponse(pattern=mconvert.pattern(
                pattern_store.record(tx, pattern_type, pattern_key, data)))

        return await write_once(self._storage, request, pb.RecordPatternResponse, record)

    async def ListPatterns(self, request: pb.ListPatternsRequest,
                           context: grpc.aio.ServicerContext) -> pb.ListPatternsResponse:
        pattern_type = validate.text("pattern_type", request.pattern_type.strip(), memory_requests.PATTERN_TYPE_MAX)
        min_frequency = validate.non_negative("min_frequency", request.min_frequency)
        page, token = await list_page(
            request, [pattern_type, min_frequency], SortKey((int, int, str), lambda p: [p.frequency, p.last_seen, p.id]),
            lambda after, limit: self._storage.read(pattern_store.list_patterns, current_scope().namespace,
                                                    pattern_type, min_frequency, limit, after))
        return pb.ListPatternsResponse(patterns=[mconvert.pattern(p) for p in page], next_page_token=token)


    # --- store items (a framework's key-value memory) -------------------------------------------

    async def PutStoreItems(self, request: pb.PutStoreItemsRequest,
                            context: grpc.aio.ServicerContext) -> pb.PutStoreItemsResponse:
        writes = sconvert.writes(request)
        task_id = validate.identifier("task_id", request.task_id, required=False)
        scope = current_scope()
        put, deleted = await self._store_items.put(scope.namespace, scope.correlation_id, writes, task_id)
        return pb.PutStoreItemsResponse(put_count=put, deleted_count=deleted)

    async def GetStoreItems(self, request: pb.GetStoreItemsRequest,
                            context: grpc.aio.ServicerContext) -> pb.GetStoreItemsResponse:
        keys = sconvert.keys(request)
        scope = current_scope()
        items = await self._store_items.get(scope.namespace, scope.correlation_id, keys, request.refresh_ttl)
        return pb.GetStoreItemsResponse(items=[sconvert.item(item) for item in items])

    async def SearchStoreItems(self, request: pb.SearchStoreItemsRequest,
                               context: grpc.aio.ServicerContext) -> pb.SearchStoreItemsResponse:
        prefix = store_items.check_path("path_prefix", request.path_prefix, allow_empty=True)
        wanted = sconvert.search_filter(request.filter_json)
        query = validate.text("query", request.query, sconvert.QUERY_MAX)
        limit, offset = sconvert.page(request.limit, request.offset, 10)
        scope = current_scope()
        hits = await self._store_items.search(scope.namespace, scope.correlation_id, prefix, wanted, query, limit,
                                              offset, request.refresh_ttl)
        return pb.SearchStoreItemsResponse(hits=[sconvert.hit(item, score) for item, score in hits])

    async def ListStoreNamespaces(self, request: pb.ListStoreNamespacesRequest,
                                  context: grpc.aio.ServicerContext) -> pb.ListStoreNamespacesResponse:
        conditions = sconvert.matches(request)
        max_depth = validate.non_negative("max_depth", request.max_depth, store_items.LABELS_MAX)
        limit, offset = sconvert.page(request.limit, request.offset, 100)
        found = await self._store_items.list_namespaces(current_scope().namespace, conditions, max_depth, limit,
                                                        offset)
        return pb.ListStoreNamespacesResponse(namespaces=[pb.StoreNamespace(path=list(path)) for path in found])
