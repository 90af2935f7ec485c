"""RenderState's compact state rendering: line format, sort order, freshness header, budget."""

from __future__ import annotations

import dataclasses

from hypothesis import given, settings, strategies as st

from taskmem.core.state_render import render_item_line, render_order, render_state
from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()


@dataclasses.dataclass
class Item:
    uid: str
    type_tag: str
    text: str
    status: str = "active"
    confidence: str = "medium"
    topic_tags: list[str] = dataclasses.field(default_factory=list)
    refs: list[str] = dataclasses.field(default_factory=lambda: ["msg_1"])
    conflict: bool = False
    conflict_with: list[str] = dataclasses.field(default_factory=list)
    pinned: bool = False
    last_seen_at: int = 0
    updated_at: int = 0
    created_at: int = 0


def test_a_line_shows_uid_type_status_first_topic_text_and_ref_count() -> None:
    item = Item("d_abc123", "decision", "Use OAuth2 PKCE flow", topic_tags=["auth", "security"],
                refs=["m1", "m2"])
    assert render_item_line(item) == "[d_abc123] DECISION (active) auth: Use OAuth2 PKCE flow [refs:2]"


def test_confidence_shows_only_when_low_and_conflict_is_marked() -> None:
    low = Item("q_1", "question", "Cache embeddings client-side?", status="open", confidence="low",
               topic_tags=["arch"])
    assert render_item_line(low) == "[q_1] QUESTION (open, low) arch: Cache embeddings client-side? [refs:1]"
    high = Item("r_1", "risk", "No rate limiting", confidence="high", conflict=True)
    assert render_item_line(high) == "[r_1] RISK (active) No rate limiting [refs:1] CONFLICT"


def test_enum_values_render_as_their_words() -> None:
    item = Item("a_1", "STATE_ITEM_TYPE_ACTION", "Run migration", status="STATE_ITEM_STATUS_OPEN")
    assert render_item_line(item) == "[a_1] ACTION (open) Run migration [refs:1]"


def test_order_is_pinned_then_type_then_confidence_then_newest_seen() -> None:
    items = [
        Item("q_old", "question", "q", last_seen_at=1),
        Item("d_low", "decision", "d", confidence="low", last_seen_at=9),
        Item("d_new", "decision", "d", last_seen_at=5),
        Item("d_old", "decision", "d", last_seen_at=2),
        Item("r_pin", "risk", "r", pinned=True),
        Item("c_1", "constraint", "c"),
        Item("a_1", "action", "a"),
        Item("r_1", "risk", "r"),
    ]
    assert [i.uid for i in render_order(items)] == [
        "r_pin", "d_new", "d_old", "d_low", "c_1", "a_1", "r_1", "q_old"]


def test_the_header_gives_the_newest_change_and_the_item_count() -> None:
    items = [Item("d_1", "decision", "x", last_seen_at=1_771_256_520_000_000),
             Item("d_2", "decision", "y", updated_at=1_771_256_580_000_000)]
    text, rendered, omitted = render_state(items, COUNTER, 500, 40)
    assert text.splitlines()[0] == "State (updated: 2026-02-16T15:43Z, items: 2)"
    assert (rendered, omitted) == (2, 0)


def test_no_items_render_nothing() -> None:
    assert render_state([], COUNTER, 500, 40) == ("", 0, 0)


def test_lines_that_do_not_fit_are_left_out_from_the_end_and_counted() -> None:
    items = [Item(f"d_{n:03d}", "decision", f"decision text number {n}", last_seen_at=100 - n) for n in range(30)]
    text, rendered, omitted = render_state(items, COUNTER, 80, 40)
    assert COUNTER.count(text) <= 80
    assert rendered + omitted == 30 and omitted > 0
    assert text.splitlines()[1].startswith("[d_000]")


def test_max_items_caps_the_lines() -> None:
    items = [Item(f"d_{n}", "decision", "x") for n in range(10)]
    assert render_state(items, COUNTER, 5000, 4)[1:] == (4, 6)


@settings(max_examples=50, deadline=None)
@given(texts=st.lists(st.text(max_size=200), max_size=30), budget=st.integers(0, 400))
def test_rendered_state_is_never_over_budget(texts: list[str], budget: int) -> None:
    items = [Item(f"d_{n}", "decision", text, topic_tags=[text[:5]] if text else []) for n, text in enumerate(texts)]
    text, rendered, omitted = render_state(items, COUNTER, budget, 40)
    assert COUNTER.count(text) <= budget
    assert rendered + omitted == len(items)
