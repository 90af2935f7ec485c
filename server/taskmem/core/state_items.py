"""Structured state items (StateService's UpsertStateItems and ExtractState): types, normalisation, uids, statuses, validation.

Pure: no I/O, no clock. Times are integer microseconds since the epoch, like the rest of core.
The reconciler (core/reconcile.py) decides what happens to a validated item; the store persists it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class StateItemType(enum.StrEnum):
    """The fixed item types. An extractor must not invent others."""

    DECISION = "decision"
    CONSTRAINT = "constraint"
    ACTION = "action"
    QUESTION = "question"
    RISK = "risk"


class Confidence(enum.StrEnum):
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


CONFIDENCE_RANK: Mapping[Confidence, int] = {Confidence.LOW: 0, Confidence.MEDIUM: 1, Confidence.HIGH: 2}

UID_PREFIXES: Mapping[StateItemType, str] = {
    StateItemType.DECISION: "d_",
    StateItemType.CONSTRAINT: "c_",
    StateItemType.ACTION: "a_",
    StateItemType.QUESTION: "q_",
    StateItemType.RISK: "r_",
}

SUPERSEDED = "superseded"

# Statuses of each type, highest merge precedence first: a merge keeps the higher one.
STATUS_PRECEDENCE: Mapping[StateItemType, tuple[str, ...]] = {
    StateItemType.ACTION: (SUPERSEDED, "done", "blocked", "open"),
    StateItemType.QUESTION: (SUPERSEDED, "answered", "open"),
    StateItemType.DECISION: (SUPERSEDED, "active"),
    StateItemType.CONSTRAINT: (SUPERSEDED, "active"),
    StateItemType.RISK: (SUPERSEDED, "active"),
}
VALID_STATUSES: Mapping[StateItemType, frozenset[str]] = {
    kind: frozenset(order) for kind, order in STATUS_PRECEDENCE.items()
}
# The status a new item of each type starts in, and what an invalid status is coerced to.
DEFAULT_STATUS: Mapping[StateItemType, str] = {
    StateItemType.ACTION: "open",
    StateItemType.QUESTION: "open",
    StateItemType.DECISION: "active",
    StateItemType.CONSTRAINT: "active",
    StateItemType.RISK: "active",
}


MAX_TOPIC_TAGS = 3
MAX_TEXT_CHARS = 1000

_QUOTES = re.compile("[\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a]")
_WHITESPACE = re.compile(r"\s+")
# A list marker at the start: "-", "*", "+", "•" and friends, or "1." / "2)"; always followed by space.
_BULLET = re.compile(r"^(?:[-*+\u2022\u2023\u2043\u25aa\u25e6\u00b7\u2013\u2014]+|\d{1,3}[.)])\s+")


def normalize_text(text: str) -> str:
    """The canonical form uids are computed from: NFC, lowercase, no quotes, no leading list
    markers, whitespace collapsed to single spaces and trimmed. Idempotent."""
    previous = None
    # One pass can expose new work (stripping a quote can reveal a bullet); iterate to a fixpoint.
    while text != previous:
        previous = text
        text = unicodedata.normalize("NFC", text).lower()
        text = _QUOTES.sub("", text)
        text = _WHITESPACE.sub(" ", text).strip()
        while (stripped := _BULLET.sub("", text, count=1)) != text:
            text = stripped.strip()
        text = unicodedata.normalize("NFC", text)
    return text


def compute_uid(type_tag: StateItemType | str, text: str) -> str:
    """Type prefix (d_, c_, a_, q_, r_) + the first 12 hex digits of
    sha256(f"{type}:{normalize_text(text)}"). Raises ValueError for an unknown type."""
    kind = StateItemType(type_tag)
    digest = hashlib.sha256(f"{kind.value}:{normalize_text(text)}".encode()).hexdigest()
    return UID_PREFIXES[kind] + digest[:12]


def status_rank(type_tag: StateItemType, status: str) -> int:
    """Higher is stronger in a merge. Raises KeyError for a status the type does not have."""
    order = STATUS_PRECEDENCE[type_tag]
    return len(order) - order.index(status)


def resolve_status_merge(type_tag: StateItemType | str, status_a: str, status_b: str) -> str:
    """The higher-precedence of two valid statuses of one type (action: superseded > done >
    blocked > open; question: superseded > answered > open; others: superseded > active).
    Commutative and idempotent. Raises ValueError for a status the type does not have."""
    kind = StateItemType(type_tag)
    for status in (status_a, status_b):
        if status not in VALID_STATUSES[kind]:
            raise ValueError(f"status {status!r} is not one of {kind.value}'s {sorted(VALID_STATUSES[kind])}")
    return max(status_a, status_b, key=lambda status: status_rank(kind, status))


def max_confidence(a: Confidence, b: Confidence) -> Confidence:
    return a if CONFIDENCE_RANK[a] >= CONFIDENCE_RANK[b] else b


@dataclasses.dataclass
class StateItem:
    """One structured state item of a thread.

    uid is compute_uid(type_tag, text) for extracted and agent items. refs are message ids.
    confidence/status are always valid once an item passed validate_item. created_at and
    last_seen_at are microseconds; last_seen_at is the newest ref's created_at (insert) and
    never goes backwards (merge).
    """

    uid: str
    type_tag: StateItemType
    text: str
    status: str
    confidence: Confidence = Confidence.MEDIUM
    topic_tags: list[str] = dataclasses.field(default_factory=list)
    refs: list[str] = dataclasses.field(default_factory=list)
    replaced_by: str | None = None
    supersession_evidence: dict[str, Any] | None = None
    conflict: bool = False
    pinned: bool = False
    source: str = "extraction"
    created_at: int = 0
    last_seen_at: int = 0
    # Only on candidates: the uid the extractor or agent says this item replaces (not stored).
    supersedes: str | None = None

    @property
    def active(self) -> bool:
        return self.status != SUPERSEDED


@dataclasses.dataclass(frozen=True)
class Candidate:
    """An item as proposed by the extractor (LLM JSON) or an agent, before validation.

    Every field is the raw value: validate_item turns it into a StateItem or says why not."""

    type_tag: str
    text: str
    status: str = ""
    confidence: str = ""
    topic_tags: Sequence[str] = ()
    refs: Sequence[str] = ()
    supersedes: str | None = None
    conflict: bool = False
    pinned: bool = False
    source: str = "extraction"


@dataclasses.dataclass(frozen=True)
class Validation:
    """validate_item's answer: the item (None when errors is not empty), fatal errors, and the
    coercions applied (for logs: the item is kept)."""

    item: StateItem | None
    errors: tuple[str, ...] = ()
    coercions: tuple[str, ...] = ()


def normalize_topic_tags(tags: Iterable[str]) -> list[str]:
    """Trimmed, lowercased, deduplicated in order, at most MAX_TOPIC_TAGS, empties dropped."""
    seen: list[str] = []
    for tag in tags:
        clean = _WHITESPACE.sub(" ", str(tag)).strip().lower()
        if clean and clean not in seen:
            seen.append(clean)
    return seen[:MAX_TOPIC_TAGS]


def validate_item(candidate: Candidate) -> Validation:
    """Validate one candidate into a StateItem.

    Errors (the item must be dropped): unknown type_tag, empty text, text over MAX_TEXT_CHARS.
    Coercions (the item is kept): a status the type does not have (or "superseded", which only
    reconciliation may set) becomes the type's DEFAULT_STATUS and confidence becomes low; an
    unknown confidence becomes low; topic tags are normalised and capped at three. refs are
    copied as given (deduplicated, order kept): check them against the batch with filter_refs.
    """
    errors: list[str] = []
    coercions: list[str] = []
    try:
        kind = StateItemType(str(candidate.type_tag).strip().lower())
    except ValueError:
        kind = None
        errors.append(f"type_tag: {candidate.type_tag!r} is not one of {[t.value for t in StateItemType]}")
    text = _WHITESPACE.sub(" ", candidate.text or "").strip()
    if not text:
        errors.append("text: empty")
    elif len(text) > MAX_TEXT_CHARS:
        errors.append(f"text: longer than {MAX_TEXT_CHARS} characters")
    if errors or kind is None:
        return Validation(None, tuple(errors))

    raw_confidence = str(candidate.confidence or "").strip().lower()
    if raw_confidence in Confidence.__members__.values():
        confidence = Confidence(raw_confidence)
    else:
        confidence = Confidence.LOW
        if raw_confidence:
            coercions.append(f"confidence: {candidate.confidence!r} is not low/medium/high; set to low")
        else:
            coercions.append("confidence: missing; set to low")
    status = str(candidate.status or "").strip().lower()
    if not status:
        status = DEFAULT_STATUS[kind]
    elif status not in VALID_STATUSES[kind] or status == SUPERSEDED:
        coercions.append(f"status: {candidate.status!r} is not valid for a new {kind.value}; "
                         f"set to {DEFAULT_STATUS[kind]} with low confidence")
        status, confidence = DEFAULT_STATUS[kind], Confidence.LOW
    tags = normalize_topic_tags(candidate.topic_tags)
    if len(tags) < len([t for t in candidate.topic_tags if str(t).strip()]):
        coercions.append(f"topic_tags: kept {tags}")
    item = StateItem(
        uid=compute_uid(kind, text), type_tag=kind, text=text, status=status, confidence=confidence,
        topic_tags=tags, refs=list(dict.fromkeys(str(r) for r in candidate.refs)),
        conflict=bool(candidate.conflict), pinned=bool(candidate.pinned), source=candidate.source,
        supersedes=(candidate.supersedes or None),
    )
    return Validation(item, (), tuple(coercions))


def filter_refs(refs: Sequence[str], allowed: Iterable[str]) -> list[str]:
    """The refs that are message ids of the batch (order kept). An item whose list comes back
    empty must be dropped: every item needs evidence from the messages it was extracted from."""
    allowed_set = set(allowed)
    return [ref for ref in refs if ref in allowed_set]


def merge_items(existing: StateItem, incoming: StateItem) -> StateItem:
    """The existing item updated by a duplicate: its uid, text and created_at kept; refs and
    topic tags unioned (existing first, tags capped at three); status by resolve_status_merge;
    the higher confidence; last_seen_at the later of the two; pinned if either is. conflict stays
    as it was on the existing item. Never call it with a superseded existing item (no resurrection):
    it raises ValueError."""
    if not existing.active:
        raise ValueError(f"{existing.uid} is superseded: a merge must not resurrect it")
    if existing.type_tag != incoming.type_tag:
        raise ValueError("items of different types never merge")
    return dataclasses.replace(
        existing,
        refs=list(dict.fromkeys([*existing.refs, *incoming.refs])),
        topic_tags=normalize_topic_tags([*existing.topic_tags, *incoming.topic_tags]),
        status=resolve_status_merge(existing.type_tag, existing.status, incoming.status),
        confidence=max_confidence(existing.confidence, incoming.confidence),
        last_seen_at=max(existing.last_seen_at, incoming.last_seen_at),
        pinned=existing.pinned or incoming.pinned,
        supersedes=None,
    )
