"""BuildContext's assembly: shares per mode, unused share flowing to the tail, never over budget."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from taskmem.core.context_budget import (
    SHARES, ContextMode, assemble_context, fit_lines_body, fit_tail_body, fit_text_body,
)
from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()


def test_shares_are_the_seeds_and_add_up_to_a_hundred() -> None:
    assert SHARES[ContextMode.FULL] == {"summary": 6, "state": 14, "knowledge": 10, "memories": 15, "tail": 55}
    assert SHARES[ContextMode.MINIMAL] == {"summary": 6, "state": 14, "knowledge": 8, "memories": 12, "tail": 60}
    assert all(sum(shares.values()) == 100 for shares in SHARES.values())


def _renderers(summary: str, state: list[str], knowledge: list[str], memories: list[str], tail: list[str]):
    return {
        "summary": lambda room: fit_text_body(COUNTER, summary, room, "summary"),
        "state": lambda room: fit_lines_body(COUNTER, state, room, "state items"),
        "knowledge": lambda room: fit_lines_body(COUNTER, knowledge, room, "knowledge entries"),
        "memories": lambda room: fit_lines_body(COUNTER, memories, room, "memories"),
        "tail": lambda room: fit_tail_body(COUNTER, tail, room),
    }


def test_each_section_stays_within_its_share_and_the_tail_takes_what_is_left() -> None:
    many = [f"line {n} with a few more words in it" for n in range(200)]
    text, sections = assemble_context(COUNTER, 1000, ContextMode.FULL,
                                      _renderers("s " * 500, many, many, many, many))
    by_name = {s.name: s for s in sections}
    assert [s.name for s in sections] == ["summary", "state", "knowledge", "memories", "tail"]
    assert by_name["summary"].allowed == 60 and by_name["state"].allowed == 140
    assert all(s.used <= s.allowed for s in sections)
    assert all(s.truncated for s in sections)
    assert COUNTER.count(text) <= 1000
    assert by_name["tail"].omitted.endswith("older messages")


def test_unused_shares_flow_to_the_tail() -> None:
    messages = [f"user: message {n} " + "word " * 20 for n in range(100)]
    text, sections = assemble_context(COUNTER, 1000, ContextMode.MINIMAL, _renderers("", [], [], [], messages))
    tail = sections[-1]
    assert tail.allowed == 1000 and tail.used > 900
    assert text.startswith("## tail\n") and COUNTER.count(text) <= 1000


def test_the_newest_message_is_cut_rather_than_lost() -> None:
    body, truncated, omitted = fit_tail_body(COUNTER, ["old", "new " * 500], 50)
    assert body.startswith("new") and body.endswith("…") and truncated
    assert omitted == "1 older messages, end of the newest message"


_line = st.text(max_size=80)


@settings(max_examples=60, deadline=None)
@given(summary=st.text(max_size=400), state=st.lists(_line, max_size=20), knowledge=st.lists(_line, max_size=20),
       memories=st.lists(_line, max_size=20), tail=st.lists(_line, max_size=40), budget=st.integers(0, 600),
       mode=st.sampled_from(list(ContextMode)))
def test_built_context_is_never_over_budget(summary: str, state: list[str], knowledge: list[str],
                                            memories: list[str], tail: list[str], budget: int,
                                            mode: ContextMode) -> None:
    text, sections = assemble_context(COUNTER, budget, mode, _renderers(summary, state, knowledge, memories, tail))
    assert COUNTER.count(text) <= budget
    assert sum(s.used for s in sections) <= budget
