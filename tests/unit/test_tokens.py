"""Exact o200k_base counts, offline, and cutting text to a budget."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()


def test_counts_are_o200k_base_loaded_without_network() -> None:
    assert COUNTER.count("hello world") == 2
    assert COUNTER.count("") == 0
    # Special-token text is counted as ordinary text, never rejected.
    assert COUNTER.count("<|endoftext|>") > 1


def test_text_that_fits_is_not_cut() -> None:
    assert COUNTER.cut("short text", 10) == "short text"


def test_a_cut_ends_with_the_marker() -> None:
    cut = COUNTER.cut("one two three four five six seven eight nine ten", 5)
    assert cut.endswith("…") and COUNTER.count(cut) <= 5


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=300), budget=st.integers(0, 60))
def test_cut_text_is_never_over_budget(text: str, budget: int) -> None:
    assert COUNTER.count(COUNTER.cut(text, budget)) <= budget


@settings(max_examples=100, deadline=None)
@given(lines=st.lists(st.text(max_size=50), max_size=20), header=st.text(max_size=20), budget=st.integers(0, 100))
def test_fitted_lines_are_never_over_budget(lines: list[str], header: str, budget: int) -> None:
    text, kept = COUNTER.fit_lines(lines, budget, header)
    assert COUNTER.count(text) <= budget and 0 <= kept <= len(lines)
