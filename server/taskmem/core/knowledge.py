"""Project knowledge: one current value per (category, key), and who wins when writers disagree."""

from __future__ import annotations

import dataclasses
import enum


class KnowledgeCategory(enum.StrEnum):
    CONVENTION = "KNOWLEDGE_CATEGORY_CONVENTION"
    ARCHITECTURE = "KNOWLEDGE_CATEGORY_ARCHITECTURE"
    DECISION = "KNOWLEDGE_CATEGORY_DECISION"
    FACT = "KNOWLEDGE_CATEGORY_FACT"


class ValueOutcome(enum.StrEnum):
    """What happened to a value that is in an entry's history."""

    REPLACED = "KNOWLEDGE_VALUE_OUTCOME_REPLACED"  # was current, lost to a later write
    REJECTED = "KNOWLEDGE_VALUE_OUTCOME_REJECTED"  # was written with lower confidence than the current value


class UpsertOutcome(enum.StrEnum):
    CREATED = "UPSERT_KNOWLEDGE_OUTCOME_CREATED"
    REPLACED = "UPSERT_KNOWLEDGE_OUTCOME_REPLACED"  # the new value won; the old one went to history
    CONFIRMED = "UPSERT_KNOWLEDGE_OUTCOME_CONFIRMED"  # the same value again: confidence is the higher of the two
    REJECTED = "UPSERT_KNOWLEDGE_OUTCOME_REJECTED"  # the current value has higher confidence; the new one went to history


@dataclasses.dataclass(frozen=True)
class KnowledgeValue:
    value: str
    source: str
    confidence: float
    written_at: int
    outcome: ValueOutcome | None = None  # set on history values


@dataclasses.dataclass(frozen=True)
class Knowledge:
    namespace: str
    id: str
    category: KnowledgeCategory
    key: str
    value: str
    source: str
    confidence: float
    revision: int
    created_at: int
    updated_at: int
    history: tuple[KnowledgeValue, ...] = ()


def arbitrate(current: KnowledgeValue, incoming: KnowledgeValue) -> UpsertOutcome:
    """Higher confidence wins; a tie goes to the newer write (the incoming one); equal values confirm."""
    if incoming.value == current.value:
        return UpsertOutcome.CONFIRMED
    if incoming.confidence >= current.confidence:
        return UpsertOutcome.REPLACED
    return UpsertOutcome.REJECTED
