"""MemoryService resources: domain → proto-JSON event payloads (and, below, domain ⇄ protobuf)."""

from __future__ import annotations

from typing import Any

from taskmem.api.convert import _compact, _duration_json, _time_json
from taskmem.core.artifacts import Artifact
from taskmem.core.episodes import Episode
from taskmem.core.knowledge import Knowledge
from taskmem.core.memory import MemoryEntry
from taskmem.core.patterns import Pattern

_RESOURCES = (MemoryEntry, Knowledge, Episode, Artifact, Pattern)


def is_memory_resource(resource: Any) -> bool:
    return isinstance(resource, _RESOURCES)


def memory_entry_json(e: MemoryEntry) -> dict[str, Any]:
    return _compact({
        "id": e.id, "task_id": e.task_id, "subtask_id": e.subtask_id, "type": e.type.value, "summary": e.summary,
        "detail": e.detail, "tags": list(e.tags), "relevance_to": list(e.relevance_to), "source": e.source,
        "create_time": _time_json(e.created_at)})


def knowledge_json(k: Knowledge) -> dict[str, Any]:
    return _compact({
        "id": k.id, "category": k.category.value, "key": k.key, "value": k.value, "source": k.source,
        "confidence": k.confidence, "revision": k.revision, "create_time": _time_json(k.created_at),
        "update_time": _time_json(k.updated_at)})


def episode_json(e: Episode) -> dict[str, Any]:
    return _compact({
        "id": e.id, "task_id": e.task_id, "agent_id": e.agent_id, "action": e.action.value, "approach": e.approach,
        "outcome": e.outcome, "duration": _duration_json(e.duration_us), "tokens_in": e.tokens_in,
        "tokens_out": e.tokens_out, "create_time": _time_json(e.created_at)})


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
