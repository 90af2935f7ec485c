"""MemoryService requests → checked domain values; every error names the field at fault."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from taskmem.api import validate
from taskmem.core.artifacts import ArtifactType
from taskmem.core.episodes import EpisodeAction
from taskmem.core.errors import InvalidArgument, LimitExceeded
from taskmem.core.knowledge import KnowledgeCategory
from taskmem.core.memory import LABEL_MAX, MemoryFilter, MemoryType, NewMemoryEntry, check_labels, check_new_entry
from taskmem.core.memory_extraction import ToolCall
from taskmem.core.memory_recency import DEFAULT_HALF_LIFE_US, RecencyWeights
from taskmem.core.memory_search import SearchMode
from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as pb

ENTRIES_MAX = 100
RELEVANT_DEFAULT, RELEVANT_MAX = 20, 500
SEARCH_DEFAULT, SEARCH_MAX, QUERY_MAX = 10, 100, 1000
TOOL_CALLS_MAX, TOOL_NAME_MAX, TOOL_TEXT_MAX, MODEL_OUTPUT_MAX = 200, 200, 256 * 1024, 256 * 1024
KEY_MAX, VALUE_MAX, SOURCE_MAX, TEXT_FILTER_MAX = 200, 16 * 1024, 200, 1000
AGENT_MAX, EPISODE_TEXT_MAX = 200, 16 * 1024
PATH_MAX, DESCRIPTION_MAX, CONTENT_MAX = 1024, 4 * 1024, 3 * 1024 * 1024
PATTERN_TYPE_MAX, PATTERN_KEY_MAX = 64, 200


def _subtask(field: str, value: str) -> str:
    value = value.strip()
    if len(value) > LABEL_MAX:
        raise LimitExceeded(field, f"is {len(value)} characters; at most {LABEL_MAX}")
    return value


def new_entries(request: pb.AddMemoryEntriesRequest) -> list[NewMemoryEntry]:
    validate.count("entries", request.entries, ENTRIES_MAX, required=True)
    return [new_entry(f"entries[{n}]", entry) for n, entry in enumerate(request.entries)]


def new_entry(at: str, e: pb.NewMemoryEntry) -> NewMemoryEntry:
    task_id = validate.identifier(f"{at}.task_id", e.task_id)
    memory_type = validate.enum(f"{at}.type", e.type, memory_pb2.MemoryType, MemoryType)
    if memory_type is None:
        raise InvalidArgument(f"{at}.type", "is required")
    entry = NewMemoryEntry(task_id=task_id, type=memory_type, summary=e.summary,
                           subtask_id=_subtask(f"{at}.subtask_id", e.subtask_id), detail=e.detail,
                           tags=tuple(e.tags), relevance_to=tuple(e.relevance_to), source="api")
    return check_new_entry(entry, field=at)


def memory_filter(field: str, f: memory_pb2.MemoryFilter) -> MemoryFilter:
    validate.count(f"{field}.types", f.types, validate.ENUM_FILTER_MAX)
    types = tuple(t for n, value in enumerate(f.types)
                  if (t := validate.enum(f"{field}.types[{n}]", value, memory_pb2.MemoryType, MemoryType)))
    return MemoryFilter(
        task_id=validate.identifier(f"{field}.task_id", f.task_id, required=False),
        subtask_id=_subtask(f"{field}.subtask_id", f.subtask_id),
        types=tuple(dict.fromkeys(types)),
        tags=check_labels(f"{field}.tags", f.tags), match_all_tags=f.match_all_tags,
        relevance_to=check_labels(f"{field}.relevance_to", f.relevance_to),
        created_after=validate.timestamp_us(f"{field}.create_time_after", f.create_time_after,
                                            f.HasField("create_time_after")),
        created_before=validate.timestamp_us(f"{field}.create_time_before", f.create_time_before,
                                             f.HasField("create_time_before")))


def relevant(request: pb.GetRelevantMemoriesRequest) -> tuple[str, str, int]:
    return (validate.identifier("task_id", request.task_id), _subtask("subtask_id", request.subtask_id),
            validate.non_negative("limit", request.limit, RELEVANT_MAX) or RELEVANT_DEFAULT)


@dataclasses.dataclass(frozen=True)
class Search:
    query: str
    mode: SearchMode
    filter: MemoryFilter
    limit: int
    recency: RecencyWeights | None  # None: relevance alone


def search(request: pb.SearchMemoriesRequest) -> Search:
    query = validate.text("query", request.query, QUERY_MAX, required=True)
    mode = validate.enum("mode", request.mode, memory_pb2.SearchMode, SearchMode, SearchMode.HYBRID)
    assert mode is not None
    recency = recency_weights(request.recency_ranking) if request.HasField("recency_ranking") else None
    return Search(query, mode, memory_filter("filter", request.filter),
                  validate.non_negative("limit", request.limit, SEARCH_MAX) or SEARCH_DEFAULT, recency)


def recency_weights(ranking: pb.RecencyRanking) -> RecencyWeights:
    field = "recency_ranking"
    for name in ("recency_weight", "importance_weight"):
        weight = getattr(ranking, name)
        if not 0.0 <= weight <= 1.0 or math.isnan(weight):
            raise InvalidArgument(f"{field}.{name}", f"is {weight}; must be from 0 to 1")
    if ranking.recency_weight + ranking.importance_weight > 1.0 + 1e-6:
        raise InvalidArgument(f"{field}.importance_weight", "recency_weight + importance_weight must be at most 1")
    half_life = validate.duration_us(f"{field}.half_life", ranking.half_life, ranking.HasField("half_life"))
    return RecencyWeights(ranking.recency_weight, ranking.importance_weight, half_life or DEFAULT_HALF_LIFE_US)


# How long SearchMemories with wait_for_embeddings waits for the backlog when the call has no deadline.
EMBEDDING_WAIT_MAX = 60.0


def embedding_wait(request: pb.SearchMemoriesRequest, time_remaining: float | None) -> float:
    """Seconds to wait for the embedding backlog: 0 unless asked; else the call's deadline (less a margin to
    answer in), at most EMBEDDING_WAIT_MAX."""
    if not request.wait_for_embeddings:
        return 0.0
    if time_remaining is None:
        return EMBEDDING_WAIT_MAX
    return max(0.0, min(EMBEDDING_WAIT_MAX, time_remaining * 0.9 - 0.05))


@dataclasses.dataclass(frozen=True)
class Extraction:
    task_id: str
    subtask_id: str
    tool_calls: tuple[ToolCall, ...]
    model_output: str


def extraction(request: pb.ExtractMemoriesRequest) -> Extraction:
    validate.count("tool_calls", request.tool_calls, TOOL_CALLS_MAX)
    calls = []
    for n, call in enumerate(request.tool_calls):
        at = f"tool_calls[{n}]"
        calls.append(ToolCall(
            tool_name=validate.text(f"{at}.tool_name", call.tool_name, TOOL_NAME_MAX, required=True),
            arguments=validate.struct(f"{at}.arguments", call.arguments, call.HasField("arguments")),
            result=validate.text(f"{at}.result", call.result, TOOL_TEXT_MAX),
            error=validate.text(f"{at}.error", call.error, TOOL_TEXT_MAX)))
    subtask_id = _subtask("subtask_id", request.subtask_id)
    if not subtask_id:
        raise InvalidArgument("subtask_id", "is required")
    return Extraction(validate.identifier("task_id", request.task_id), subtask_id, tuple(calls),
                      validate.text("model_output", request.model_output, MODEL_OUTPUT_MAX))


def category(field: str, value: int, *, required: bool) -> KnowledgeCategory | None:
    found = validate.enum(field, value, memory_pb2.KnowledgeCategory, KnowledgeCategory)
    if found is None and required:
        raise InvalidArgument(field, "is required")
    return found


def knowledge_key(field: str, value: str) -> str:
    return validate.text(field, value.strip(), KEY_MAX, required=True)


@dataclasses.dataclass(frozen=True)
class KnowledgeWrite:
    category: KnowledgeCategory
    key: str
    value: str
    source: str
    confidence: float


def knowledge_write(request: pb.UpsertKnowledgeRequest) -> KnowledgeWrite:
    chosen = category("category", request.category, required=True)
    assert chosen is not None
    confidence = request.confidence if request.HasField("confidence") else 1.0
    if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
        raise InvalidArgument("confidence", "must be between 0 and 1")
    return KnowledgeWrite(chosen, knowledge_key("key", request.key),
                          validate.text("value", request.value, VALUE_MAX, required=True),
                          validate.text("source", request.source, SOURCE_MAX), confidence)


@dataclasses.dataclass(frozen=True)
class EpisodeRecord:
    task_id: str
    agent_id: str
    action: EpisodeAction
    approach: str
    outcome: str
    duration_us: int | None
    tokens_in: int
    tokens_out: int


def episode(request: pb.RecordEpisodeRequest) -> EpisodeRecord:
    action = validate.enum("action", request.action, memory_pb2.EpisodeAction, EpisodeAction)
    if action is None:
        raise InvalidArgument("action", "is required")
    return EpisodeRecord(
        validate.identifier("task_id", request.task_id),
        validate.text("agent_id", request.agent_id, AGENT_MAX, required=True), action,
        validate.text("approach", request.approach, EPISODE_TEXT_MAX, required=True),
        validate.text("outcome", request.outcome, EPISODE_TEXT_MAX),
        validate.duration_us("duration", request.duration, request.HasField("duration")),
        validate.non_negative("tokens_in", request.tokens_in), validate.non_negative("tokens_out", request.tokens_out))


def episode_action(value: int) -> EpisodeAction | None:
    return validate.enum("action", value, memory_pb2.EpisodeAction, EpisodeAction)


@dataclasses.dataclass(frozen=True)
class ArtifactRecord:
    task_id: str
    agent_id: str
    type: ArtifactType
    path: str
    description: str
    content: bytes | None
    size_bytes: int | None
    sha256: str


def artifact(request: pb.RegisterArtifactRequest) -> ArtifactRecord:
    kind = artifact_type(request.type)
    if kind is None:
        raise InvalidArgument("type", "is required")
    content = request.content if request.HasField("content") else None
    if content is not None and len(content) > CONTENT_MAX:
        raise LimitExceeded("content", f"is {len(content)} bytes; at most {CONTENT_MAX}")
    size = validate.non_negative("size_bytes", request.size_bytes) if request.HasField("size_bytes") else None
    return ArtifactRecord(
        validate.identifier("task_id", request.task_id), validate.text("agent_id", request.agent_id, AGENT_MAX),
        kind, validate.text("path", request.path.strip(), PATH_MAX, required=True),
        validate.text("description", request.description, DESCRIPTION_MAX), content, size, request.sha256)


def artifact_type(value: int) -> ArtifactType | None:
    return validate.enum("type", value, memory_pb2.ArtifactType, ArtifactType)


def pattern(request: pb.RecordPatternRequest) -> tuple[str, str, dict[str, Any] | None]:
    """(type, key, data); data None when not sent (the stored data stays)."""
    data = validate.struct("data", request.data) if request.HasField("data") else None
    return (validate.text("pattern_type", request.pattern_type.strip(), PATTERN_TYPE_MAX, required=True),
            validate.text("pattern_key", request.pattern_key.strip(), PATTERN_KEY_MAX, required=True), data)
