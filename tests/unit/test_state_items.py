"""Structured state items: normalisation, uids, statuses and their precedence, validation."""

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskmem.core.state_items import (
    DEFAULT_STATUS,
    STATUS_PRECEDENCE,
    Candidate,
    Confidence,
    StateItem,
    StateItemType,
    compute_uid,
    filter_refs,
    merge_items,
    normalize_text,
    resolve_status_merge,
    validate_item,
)

TYPES = list(StateItemType)


def test_normalisation_lowercases_trims_collapses_and_strips_quotes_and_bullets() -> None:
    assert normalize_text('  - "Use   Redis"\tfor\ncaching ') == "use redis for caching"
    assert normalize_text("• 2) \u201cCafe\u0301\u201d") == "caf\u00e9"
    assert normalize_text("-5 degrees is the limit") == "-5 degrees is the limit"  # a sign, not a bullet


@given(st.text())
def test_normalisation_is_idempotent(text: str) -> None:
    once = normalize_text(text)
    assert normalize_text(once) == once


def test_uid_is_prefix_and_first_12_hex_of_sha256_of_type_and_normalised_text() -> None:
    digest = hashlib.sha256(b"decision:use redis for caching").hexdigest()[:12]
    assert compute_uid("decision", "  Use Redis for caching") == "d_" + digest
    prefixes = {compute_uid(kind, "x")[:2] for kind in TYPES}
    assert prefixes == {"d_", "c_", "a_", "q_", "r_"}


@given(st.sampled_from(TYPES), st.text(min_size=1))
def test_uid_is_stable_under_normalisation_and_differs_by_type(kind: StateItemType, text: str) -> None:
    uid = compute_uid(kind, text)
    assert uid == compute_uid(kind, normalize_text(text)) == compute_uid(kind.value, f'  "{text}" ')
    assert len(uid) == 14
    other = next(t for t in TYPES if t is not kind)
    assert compute_uid(other, text)[2:] != uid[2:]


def test_unknown_type_has_no_uid() -> None:
    with pytest.raises(ValueError):
        compute_uid("opinion", "x")


@pytest.mark.parametrize("kind, low, high", [
    ("action", "open", "blocked"), ("action", "blocked", "done"), ("action", "done", "superseded"),
    ("question", "open", "answered"), ("question", "answered", "superseded"),
    ("decision", "active", "superseded"), ("constraint", "active", "superseded"), ("risk", "active", "superseded"),
])
def test_merge_keeps_the_higher_precedence_status(kind: str, low: str, high: str) -> None:
    assert resolve_status_merge(kind, low, high) == high
    assert resolve_status_merge(kind, high, low) == high


@given(st.sampled_from(TYPES), st.data())
def test_status_merge_is_commutative_idempotent_and_associative(kind: StateItemType, data: st.DataObject) -> None:
    statuses = st.sampled_from(STATUS_PRECEDENCE[kind])
    a, b, c = data.draw(statuses), data.draw(statuses), data.draw(statuses)
    assert resolve_status_merge(kind, a, b) == resolve_status_merge(kind, b, a)
    assert resolve_status_merge(kind, a, a) == a
    assert resolve_status_merge(kind, resolve_status_merge(kind, a, b), c) == \
        resolve_status_merge(kind, a, resolve_status_merge(kind, b, c))


def test_status_merge_rejects_a_status_the_type_does_not_have() -> None:
    with pytest.raises(ValueError):
        resolve_status_merge("decision", "active", "done")


def test_validation_coerces_an_invalid_status_to_the_type_default_with_low_confidence() -> None:
    result = validate_item(Candidate("action", "Run migration 025", status="finished", confidence="high"))
    assert result.item is not None and not result.errors
    assert result.item.status == "open" and result.item.confidence is Confidence.LOW
    assert any("status" in note for note in result.coercions)


@given(st.sampled_from(TYPES), st.text(min_size=1).filter(
    lambda s: s.strip() != "" and s.strip().lower() not in {"active", "open", "done", "blocked", "answered"}))
def test_any_invalid_status_is_coerced_never_kept(kind: StateItemType, status: str) -> None:
    item = validate_item(Candidate(kind.value, "Keep the API stable", status=status, confidence="high")).item
    assert item is not None
    assert item.status == DEFAULT_STATUS[kind] and item.confidence is Confidence.LOW


def test_a_missing_status_is_the_type_default_without_penalty() -> None:
    item = validate_item(Candidate("question", "Which region?", confidence="high")).item
    assert item is not None and item.status == "open" and item.confidence is Confidence.HIGH


def test_a_new_item_cannot_arrive_superseded() -> None:
    item = validate_item(Candidate("decision", "Use Redis", status="superseded", confidence="high")).item
    assert item is not None and item.status == "active" and item.confidence is Confidence.LOW


def test_validation_keeps_a_valid_item_and_normalises_its_tags() -> None:
    result = validate_item(Candidate("Question", " Cache client-side? ", status="answered", confidence="medium",
                                     topic_tags=["Arch", "arch", " cache ", "perf", "extra"], refs=["m1", "m1", "m2"]))
    item = result.item
    assert item is not None
    assert (item.type_tag, item.text, item.status, item.confidence) == \
        (StateItemType.QUESTION, "Cache client-side?", "answered", Confidence.MEDIUM)
    assert item.topic_tags == ["arch", "cache", "perf"] and item.refs == ["m1", "m2"]
    assert item.uid == compute_uid("question", "cache client-side?")


@pytest.mark.parametrize("candidate, field", [
    (Candidate("opinion", "Redis is nice"), "type_tag"),
    (Candidate("decision", "   "), "text"),
    (Candidate("decision", "x" * 1001), "text"),
])
def test_validation_rejects_unknown_types_and_empty_or_huge_text(candidate: Candidate, field: str) -> None:
    result = validate_item(candidate)
    assert result.item is None and result.errors[0].startswith(field)


def test_refs_outside_the_batch_are_filtered() -> None:
    assert filter_refs(["m1", "invented", "m3"], {"m1", "m2", "m3"}) == ["m1", "m3"]
    assert filter_refs(["invented"], {"m1"}) == []


def _item(text: str, **fields: object) -> StateItem:
    item = validate_item(Candidate("action", text, confidence="medium", refs=["m1"])).item
    assert item is not None
    for name, value in fields.items():
        setattr(item, name, value)
    return item


def test_merge_unions_refs_and_tags_takes_precedence_confidence_and_latest_sighting() -> None:
    old = _item("Run migration 025", refs=["m1"], topic_tags=["db"], status="blocked", last_seen_at=50,
                created_at=10)
    new = _item("run migration 025", refs=["m2", "m1"], topic_tags=["deploy", "db"], status="done",
                confidence=Confidence.HIGH, last_seen_at=40)
    merged = merge_items(old, new)
    assert merged.uid == old.uid and merged.text == old.text and merged.created_at == 10
    assert merged.refs == ["m1", "m2"] and merged.topic_tags == ["db", "deploy"]
    assert merged.status == "done" and merged.confidence is Confidence.HIGH
    assert merged.last_seen_at == 50  # a merge never ages an item


def test_merge_never_resurrects_a_superseded_item() -> None:
    with pytest.raises(ValueError):
        merge_items(_item("Run migration 025", status="superseded"), _item("Run migration 025"))
