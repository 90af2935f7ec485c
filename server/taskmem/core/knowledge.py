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
    replaced_at: int | None = None  # a REPLACED value: when it stopped holding (it held from written_at)
    cursor: int = 0  # the event that wrote it, on history values read with their history (0: not known)


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
    valid_from: int = 0  # since when value holds (updated_at also moves on a source or confidence change)


def value_at(entry: Knowledge, at: int) -> Knowledge | None:
    """The entry as it stood at `at` (its history filled): the value that held then, or None when the
    entry did not exist yet. A REJECTED value never held."""
    if entry.created_at > at:
        return None
    if entry.valid_from <= at:
        return entry
    held = next((v for v in entry.history if v.outcome is ValueOutcome.REPLACED and v.replaced_at is not None
                 and v.written_at <= at < v.replaced_at), None)
    if held is None:
        return None
    return dataclasses.replace(entry, value=held.value, source=held.source, confidence=held.confidence,
                               valid_from=held.written_at, updated_at=held.written_at)


def arbitrate(current: KnowledgeValue, incoming: KnowledgeValue) -> UpsertOutcome:
    """Higher confidence wins; a tie goes to the newer write (the incoming one); equal values confirm."""
    if incoming.value == current.value:
        return UpsertOutcome.CONFIRMED
    if incoming.confidence >= current.confidence:
        return UpsertOutcome.REPLACED
    return UpsertOutcome.REJECTED
