"""Memory entries: the typed archive's records and the rules every entry must meet, wherever it comes from."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence

from taskmem.core.errors import InvalidArgument, LimitExceeded


class MemoryType(enum.StrEnum):
    DECISION = "MEMORY_TYPE_DECISION"
    ERROR = "MEMORY_TYPE_ERROR"
    TOOL_RESULT = "MEMORY_TYPE_TOOL_RESULT"
    USER_INSTRUCTION = "MEMORY_TYPE_USER_INSTRUCTION"
    DISCOVERY = "MEMORY_TYPE_DISCOVERY"
    ARTIFACT = "MEMORY_TYPE_ARTIFACT"
    CONTEXT = "MEMORY_TYPE_CONTEXT"

    @property
    def short(self) -> str:
        """decision, error, tool_result, …: the name a model or a person writes."""
        return self.value.removeprefix("MEMORY_TYPE_").lower()

    @classmethod
    def from_short(cls, name: str) -> MemoryType | None:
        try:
            return cls("MEMORY_TYPE_" + name.strip().upper())
        except ValueError:
            return None


# Every decision, error and user instruction of a task matters to all its subtasks.
ALWAYS_RELEVANT = (MemoryType.DECISION, MemoryType.ERROR, MemoryType.USER_INSTRUCTION)

SUMMARY_MAX = 300
DETAIL_MAX = 64 * 1024
LABEL_MAX = 64  # one tag or one subtask id
LABELS_MAX = 32  # tags or relevance_to per entry
LABEL_ENTRIES_MAX = 4 * LABELS_MAX  # entries as sent, duplicates included: checked before any is read


@dataclasses.dataclass(frozen=True)
class NewMemoryEntry:
    """An entry about to be written (validated with check_new_entry)."""

    task_id: str
    type: MemoryType
    summary: str
    subtask_id: str = ""
    detail: str = ""
    tags: tuple[str, ...] = ()
    relevance_to: tuple[str, ...] = ()
    # Who wrote it: "api", "extraction", "state", …
    source: str = ""
    # When it expires (µs), as the writer asked; None: the namespace's configured TTL (core/retention.py).
    expires_at: int | None = None
    # Exempt from the configured TTL: kept until deleted.
    pinned: bool = False


@dataclasses.dataclass(frozen=True)
class MemoryEntry:
    namespace: str
    id: str
    seq: int
    task_id: str
    subtask_id: str
    type: MemoryType
    summary: str
    detail: str
    tags: tuple[str, ...]
    relevance_to: tuple[str, ...]
    source: str
    created_at: int
    expires_at: int | None = None  # from then on no read returns it (core/retention.py)


def normalise_label(value: str) -> str:
    """Tags and subtask ids compare as written, minus surrounding whitespace."""
    return value.strip()


def check_labels(field: str, values: Sequence[str]) -> tuple[str, ...]:
    """Distinct non-empty labels in first-seen order; each at most LABEL_MAX characters."""
    if len(values) > LABEL_ENTRIES_MAX:
        raise LimitExceeded(field, f"has {len(values)} entries; at most {LABEL_ENTRIES_MAX}")
    seen: dict[str, None] = {}
    for index, raw in enumerate(values):
        label = normalise_label(raw)
        if not label:
            raise InvalidArgument(f"{field}[{index}]", "must not be empty")
        if len(label) > LABEL_MAX:
            raise LimitExceeded(f"{field}[{index}]", f"is {len(label)} characters; at most {LABEL_MAX}")
        seen.setdefault(label, None)
    if len(seen) > LABELS_MAX:
        raise LimitExceeded(field, f"has {len(seen)} values; at most {LABELS_MAX}")
    return tuple(seen)


def check_new_entry(entry: NewMemoryEntry, field: str = "entry") -> NewMemoryEntry:
    """The entry with labels normalised, or InvalidArgument naming the first bad field under `field`."""
    summary = entry.summary.strip()
    if not summary:
        raise InvalidArgument(f"{field}.summary", "is required")
    if len(summary) > SUMMARY_MAX:
        raise LimitExceeded(f"{field}.summary", f"is {len(summary)} characters; at most {SUMMARY_MAX}")
    if len(entry.detail) > DETAIL_MAX:
        raise LimitExceeded(f"{field}.detail", f"is {len(entry.detail)} characters; at most {DETAIL_MAX}")
    if not entry.task_id:
        raise InvalidArgument(f"{field}.task_id", "is required")
    return dataclasses.replace(
        entry, summary=summary, subtask_id=normalise_label(entry.subtask_id),
        tags=check_labels(f"{field}.tags", entry.tags),
        relevance_to=check_labels(f"{field}.relevance_to", entry.relevance_to))


@dataclasses.dataclass(frozen=True)
class MemoryFilter:
    """What QueryMemoryEntries and SearchMemories narrow to; empty fields do not filter."""

    task_id: str = ""
    subtask_id: str = ""
    types: tuple[MemoryType, ...] = ()
    tags: tuple[str, ...] = ()
    match_all_tags: bool = False
    relevance_to: tuple[str, ...] = ()
    created_after: int | None = None  # inclusive, microseconds
    created_before: int | None = None  # exclusive

    def key(self) -> list[object]:
        """A JSON-able identity for page tokens."""
        return [self.task_id, self.subtask_id, sorted(self.types), sorted(self.tags), self.match_all_tags,
                sorted(self.relevance_to), self.created_after, self.created_before]
