"""Memory core without I/O: reading a utility model's reply, checking candidates and entries,
knowledge arbitration and artifact checksums."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, strategies as st

from taskmem.core.artifacts import ChecksumMismatch, checked_digest
from taskmem.core.errors import InvalidArgument, LimitExceeded
from taskmem.core.knowledge import KnowledgeValue, UpsertOutcome, arbitrate
from taskmem.core.memory import MemoryType, NewMemoryEntry, check_new_entry
from taskmem.core.memory_extraction import (
    NoArrayFound, PromptTemplate, ToolCall, check_candidates, parse_candidates, render_prompt,
)

ITEMS = [{"type": "decision", "summary": "Use pgloader"}, {"type": "error", "summary": "SPATIAL unsupported"}]


@pytest.mark.parametrize("reply", [
    json.dumps(ITEMS),
    "```json\n" + json.dumps(ITEMS) + "\n```",
    "Sure! Here are the entries:\n" + json.dumps(ITEMS, indent=2) + "\nLet me know if you need more.",
    json.dumps({"entries": ITEMS}),
    "```\n" + json.dumps(ITEMS),  # a fence the model never closed
])
def test_the_array_is_found_in_any_shape_a_model_answers_with(reply: str) -> None:
    assert parse_candidates(reply) == ITEMS


def test_a_cut_off_array_yields_its_complete_items() -> None:
    assert parse_candidates(json.dumps(ITEMS)[:-15]) == ITEMS[:1]


def test_a_lone_object_is_one_candidate_and_prose_is_no_array() -> None:
    assert parse_candidates('{"type": "context", "summary": "Express app"}') == [
        {"type": "context", "summary": "Express app"}]
    with pytest.raises(NoArrayFound):
        parse_candidates("Nothing worth keeping here.")


@given(st.lists(st.fixed_dictionaries({"type": st.sampled_from(["decision", "error"]),
                                       "summary": st.text(st.characters(whitelist_categories=("L", "Zs")),
                                                          max_size=20)}), min_size=1, max_size=5),
       st.data())
def test_any_cut_of_an_array_reads_as_a_prefix_of_its_items_or_as_no_array(items: list[dict[str, str]],
                                                                            data: st.DataObject) -> None:
    text = json.dumps(items)
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    try:
        found = parse_candidates(text[:cut])
    except NoArrayFound:
        return
    assert found == items[:len(found)]


def test_candidates_are_checked_one_by_one_with_reasons() -> None:
    valid, dropped = check_candidates([
        {"type": "Decision", "summary": " Use pgloader ", "tags": "db, tools", "relevance_to": ["load"]},
        {"type": "rumour", "summary": "x"},
        {"type": "discovery", "summary": ""},
        {"type": "discovery", "summary": "y", "tags": [1, 2]},
        ["not", "an", "object"],
    ], "tsk_1", "schema")
    assert [(e.type, e.summary, e.tags, e.relevance_to, e.source, e.subtask_id) for e in valid] == [
        (MemoryType.DECISION, "Use pgloader", ("db", "tools"), ("load",), "extraction", "schema")]
    reasons = {d.index: d.reason for d in dropped}
    assert reasons[1].startswith("type: 'rumour' is not one of") and reasons[2] == "summary: is required"
    assert reasons[3].startswith("tags:") and reasons[4] == "entry: is a list, not an object"


def test_prompt_placeholders_are_replaced_literally_and_long_results_are_cut() -> None:
    template = PromptTemplate(system="S", user="{subtask_id}|{tool_calls_formatted}|{model_output}")
    _, user = render_prompt(template, "build", [ToolCall("exec", {"cmd": "{model_output}"}, "r" * 5000)], "")
    assert user.startswith("build|1. exec {\"cmd\": \"{model_output}\"}") and "[1000 more characters]" in user
    assert user.endswith("|(no output)")


def test_an_entry_names_the_field_that_breaks_a_rule() -> None:
    entry = NewMemoryEntry(task_id="t", type=MemoryType.ERROR, summary="s", tags=("a", " a ", "b"))
    assert check_new_entry(entry).tags == ("a", "b")
    with pytest.raises(LimitExceeded) as long:
        check_new_entry(NewMemoryEntry(task_id="t", type=MemoryType.ERROR, summary="s" * 301), "entries[3]")
    assert long.value.field == "entries[3].summary"
    with pytest.raises(LimitExceeded) as many:
        check_new_entry(NewMemoryEntry(task_id="t", type=MemoryType.ERROR, summary="s",
                                       relevance_to=tuple(f"s{n}" for n in range(33))))
    assert many.value.field == "entry.relevance_to"


def test_higher_confidence_wins_and_a_tie_goes_to_the_newer_write() -> None:
    current = KnowledgeValue("node: prefix", "a", 0.6, 1)
    assert arbitrate(current, KnowledgeValue("bare", "b", 0.5, 2)) is UpsertOutcome.REJECTED
    assert arbitrate(current, KnowledgeValue("bare", "b", 0.6, 2)) is UpsertOutcome.REPLACED
    assert arbitrate(current, KnowledgeValue("bare", "b", 0.9, 2)) is UpsertOutcome.REPLACED
    assert arbitrate(current, KnowledgeValue("node: prefix", "b", 0.1, 2)) is UpsertOutcome.CONFIRMED


def test_checksums_are_computed_from_content_and_given_values_must_agree() -> None:
    digest = hashlib.sha256(b"hello").hexdigest()
    assert checked_digest(b"hello", "", None) == (digest, 5)
    assert checked_digest(b"hello", digest.upper(), 5) == (digest, 5)
    assert checked_digest(None, digest, 42) == (digest, 42)
    with pytest.raises(ChecksumMismatch) as wrong:
        checked_digest(b"hello", "0" * 64, None)
    assert wrong.value.field == "sha256" and wrong.value.reason == "ERROR_REASON_CHECKSUM_MISMATCH"
    with pytest.raises(ChecksumMismatch) as size:
        checked_digest(b"hello", "", 4)
    assert size.value.field == "size_bytes"
    with pytest.raises(InvalidArgument):
        checked_digest(None, "not-hex", None)
