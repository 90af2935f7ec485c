"""MemoryService resources: domain → protobuf, and domain → proto-JSON event payloads."""

from __future__ import annotations

from typing import Any

from taskmem.api import task_convert
from taskmem.api.task_convert import _compact, _duration_json, _time_json
from taskmem.core.artifacts import Artifact
from taskmem.core.episodes import Episode
from taskmem.core.knowledge import Knowledge, KnowledgeValue
from taskmem.core.memory import MemoryEntry
from taskmem.core.memory_search import Hit, SearchMode
from taskmem.core.patterns import Pattern
from taskmem.v1 import memory_pb2

_RESOURCES = (MemoryEntry, Knowledge, Episode, Artifact, Pattern)


def is_memory_resource(resource: Any) -> bool:
    return isinstance(resource, _RESOURCES)


def memory_entry_json(e: MemoryEntry) -> dict[str, Any]:
    return _compact({
        "id": e.id, "task_id": e.task_id, "subtask_id": e.subtask_id, "type": e.type.value, "summary": e.summary,
        "detail": e.detail, "tags": list(e.tags), "relevance_to": list(e.relevance_to), "source": e.source,
        "create_time": _time_json(e.created_at), "expire_time": _time_json(e.expires_at)})


def knowledge_json(k: Knowledge) -> dict[str, Any]:
    return _compact({
        "id": k.id, "category": k.category.value, "key": k.key, "value": k.value, "source": k.source,
        "confidence": k.confidence, "revision": str(k.revision), "create_time": _time_json(k.created_at),
        "update_time": _time_json(k.updated_at), "valid_from": _time_json(k.valid_from)})


def episode_json(e: Episode) -> dict[str, Any]:
    return _compact({
        "id": e.id, "task_id": e.task_id, "agent_id": e.agent_id, "action": e.action.value, "approach": e.approach,
        "outcome": e.outcome, "duration": _duration_json(e.duration_us), "tokens_in": str(e.tokens_in or ""),
        "tokens_out": str(e.tokens_out or ""), "create_time": _time_json(e.created_at),
        "archive_time": _time_json(e.archived_at), "expire_time": _time_json(e.expires_at)})


def artifact_json(a: Artifact) -> dict[str, Any]:
    return _compact({
        "id": a.id, "task_id": a.task_id, "agent_id": a.agent_id, "type": a.type.value, "path": a.path,
        "description": a.description, "size_bytes": str(a.size_bytes) if a.size_bytes is not None else None,
        "sha256": a.sha256, "create_time": _time_json(a.created_at)})


def pattern_json(p: Pattern) -> dict[str, Any]:
    return _compact({
        "id": p.id, "pattern_type": p.pattern_type, "pattern_key": p.pattern_key, "data": p.data,
        "frequency": str(p.frequency), "create_time": _time_json(p.created_at),
        "last_seen_time": _time_json(p.last_seen)})


def event_json(resource: Any) -> dict[str, Any]:
    """The proto JSON (original field names) of a MemoryService resource, for an event's payload."""
    if isinstance(resource, MemoryEntry):
        return memory_entry_json(resource)
    if isinstance(resource, Knowledge):
        return knowledge_json(resource)
    if isinstance(resource, Episode):
        return episode_json(resource)
    if isinstance(resource, Artifact):
        return artifact_json(resource)
    return pattern_json(resource)


def memory_entry(e: MemoryEntry) -> memory_pb2.MemoryEntry:
    return memory_pb2.MemoryEntry(
        id=e.id, task_id=e.task_id, subtask_id=e.subtask_id, type=e.type.value, summary=e.summary, detail=e.detail,
        tags=e.tags, relevance_to=e.relevance_to, source=e.source, create_time=task_convert.timestamp(e.created_at),
        expire_time=task_convert.timestamp(e.expires_at))


def search_hit(hit: Hit, entry: MemoryEntry, embedding_pending: bool = False,
               superseded_at: int | None = None) -> memory_pb2.MemorySearchHit:
    return memory_pb2.MemorySearchHit(
        entry=memory_entry(entry), score=hit.score, found_by=[m.value for m in hit.found_by], snippet=hit.snippet,
        fulltext_rank=hit.fulltext_rank, semantic_rank=hit.semantic_rank, embedding_pending=embedding_pending,
        superseded=superseded_at is not None, valid_to=task_convert.timestamp(superseded_at))


def search_mode(mode: SearchMode) -> int:
    return memory_pb2.SearchMode.Value(mode.value)


def knowledge(k: Knowledge) -> memory_pb2.Knowledge:
    return memory_pb2.Knowledge(
        id=k.id, category=k.category.value, key=k.key, value=k.value, source=k.source, confidence=k.confidence,
        revision=k.revision, create_time=task_convert.timestamp(k.created_at), update_time=task_convert.timestamp(k.updated_at),
        valid_from=task_convert.timestamp(k.valid_from), history=[knowledge_value(v) for v in k.history])


def knowledge_value(v: KnowledgeValue) -> memory_pb2.KnowledgeValue:
    held = v.replaced_at is not None  # a REJECTED value never held: no valid time
    return memory_pb2.KnowledgeValue(value=v.value, source=v.source, confidence=v.confidence,
                                     write_time=task_convert.timestamp(v.written_at),
                                     outcome=v.outcome.value if v.outcome else None,
                                     valid_from=task_convert.timestamp(v.written_at) if held else None,
                                     valid_to=task_convert.timestamp(v.replaced_at), cursor=v.cursor)


def episode(e: Episode) -> memory_pb2.Episode:
    return memory_pb2.Episode(
        id=e.id, task_id=e.task_id, agent_id=e.agent_id, action=e.action.value, approach=e.approach,
        outcome=e.outcome, duration=task_convert.duration(e.duration_us), tokens_in=e.tokens_in, tokens_out=e.tokens_out,
        create_time=task_convert.timestamp(e.created_at), archive_time=task_convert.timestamp(e.archived_at),
        expire_time=task_convert.timestamp(e.expires_at))


def artifact(a: Artifact) -> memory_pb2.Artifact:
    return memory_pb2.Artifact(
        id=a.id, task_id=a.task_id, agent_id=a.agent_id, type=a.type.value, path=a.path, description=a.description,
        size_bytes=a.size_bytes, sha256=a.sha256, create_time=task_convert.timestamp(a.created_at))


def pattern(p: Pattern) -> memory_pb2.Pattern:
    return memory_pb2.Pattern(
        id=p.id, pattern_type=p.pattern_type, pattern_key=p.pattern_key, data=task_convert.struct(p.data),
        frequency=p.frequency, create_time=task_convert.timestamp(p.created_at),
        last_seen_time=task_convert.timestamp(p.last_seen))
