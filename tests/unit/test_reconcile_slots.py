"""Reconciliation compares the differing slots of two aligned texts: values written one way,
polarity and opposite poles, and whether the slot picks out a different object or measure.

The examples here are of their own, not copied from the labelled sets (those are scored by
test_reconcile_labelled_pairs.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskmem.core.reconcile import Decision, Outcome
from taskmem.core.reconcile_signals import change_phrase, content_tokens, find_contrast, find_distinction
from taskmem.core.reconcile_values import canonical_text
from tests.unit.reconcile_support import decide_pair, thresholds

T = thresholds()


def decide(old_text: str, new_text: str, cosine: float, kind: str = "decision") -> Decision:
    return decide_pair(old_text, new_text, cosine, T, kind)


# ------------------------------------------------------------------ one value, one spelling

@pytest.mark.parametrize("one, other", [
    ("Back up the database at 23:30", "Back up the database at 11:30 pm"),
    ("The report is due at noon", "The report is due at 12:00"),
    ("Freeze the serum at -20 °C", "Freeze the serum at minus 20 degrees Celsius"),
    ("The taxi may cost at most €45", "The taxi may cost no more than 45 euros"),
    ("Parcels heavier than 2 kilograms go by courier", "Parcels over 2 kg go by courier"),
    ("Calls last up to 30 minutes", "Calls last at most 30 minutes"),
    ("Use an eight-column table", "Use an 8-column table"),
    ("Stand-ups are held in Eastern Time", "Stand-ups are held in EST"),
])
def test_one_value_in_other_words_gives_the_same_tokens(one: str, other: str) -> None:
    assert content_tokens(one) == content_tokens(other)


def test_a_negated_comparator_is_the_opposite_bound() -> None:
    assert content_tokens("Talks must not run over 20 minutes") == content_tokens("Talks must run at most 20 minutes")
    assert content_tokens("Drafts must not be shorter than 3 pages") == \
        content_tokens("Drafts must be at least 3 pages")


def test_a_bound_phrase_is_not_change_language() -> None:
    assert change_phrase("Meetings last no longer than an hour") is None
    assert change_phrase("The meeting is no longer weekly") == "no longer"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([*"abcdefmpt ,:.-0123456789°€$%", " am", " pm", " utc", " kg", " no longer than ",
                                  " not ", " over ", " outside ", " minus ", " local time", " 12:30"]), max_size=30))
def test_canonical_text_is_idempotent(pieces: list[str]) -> None:
    once = canonical_text("".join(pieces))
    assert canonical_text(once) == once


# ------------------------------------------------------------------ values compared


# ------------------------------------------------------------------ polarity and poles

@pytest.mark.parametrize("old_text, new_text", [
    ("Sort the search results newest first", "Sort the search results oldest first"),
    ("Attendance at the briefing is optional", "Attendance at the briefing is compulsory"),
    ("Keep the checkout service stateful", "Keep the checkout service stateless"),
    ("Store the archive encrypted", "Store the archive unencrypted"),
    ("Print the labels in landscape orientation", "Print the labels in portrait orientation"),
    ("Hold the maintenance window within office hours", "Hold the maintenance window outside office hours"),
    ("Use a larger font for the captions", "Use a smaller font for the captions"),
])
def test_opposite_poles_or_polarity_in_one_frame_are_a_contrast(old_text: str, new_text: str) -> None:
    contrast = find_contrast(old_text, new_text, 0.5)
    assert contrast is not None and contrast.kind in ("antonym", "negation")
    assert decide(old_text, new_text, 0.95).outcome is Outcome.CONFLICT


# ------------------------------------------------------------------ the same frame, another object or measure

@pytest.mark.parametrize("old_text, new_text, kind", [
    ("Send the agenda to the Oslo team", "Send the agenda to the Lisbon team", "named_object"),
    ("File the June expense claims", "File the July expense claims", "named_object"),
    ("Suitcases must not be longer than 55 cm", "Suitcases must not weigh more than 8 kg", "measure"),
    ("The app needs Java 17 or later", "The app needs Kotlin 1.9 or later", "measure"),
])
def test_another_object_or_measure_in_the_same_frame_is_a_different_item(
        old_text: str, new_text: str, kind: str) -> None:
    distinction = find_distinction(old_text, new_text, 0.5)
    assert distinction is not None and distinction.kind == kind
    assert find_contrast(old_text, new_text, 0.5) is None
    decision = decide(old_text, new_text, 0.9, kind="action")
    assert (decision.outcome, decision.rule) == (Outcome.INSERT, "distinct")
    assert decision.evidence["distinct"]["kind"] == kind  # the reason is recorded


def test_one_choice_slot_with_different_names_stays_a_conflict() -> None:
    assert decide("Host the wiki on Confluence", "Host the wiki on Notion", 0.8).outcome is Outcome.CONFLICT


@pytest.mark.parametrize("old_text, new_text", [
    ("Sort the search results newest first", "Sort the search results oldest first"),
    ("Send the agenda to the Oslo team", "Send the agenda to the Lisbon team"),
    ("Quiet hours run from 20:00 to 07:00", "Quiet hours run from 07:00 to 20:00"),
    ("Suitcases must not be longer than 55 cm", "Suitcases must not weigh more than 8 kg"),
])
def test_contrast_and_distinction_do_not_depend_on_which_text_came_first(old_text: str, new_text: str) -> None:
    forward = find_contrast(old_text, new_text, 0.5), find_distinction(old_text, new_text, 0.5)
    backward = find_contrast(new_text, old_text, 0.5), find_distinction(new_text, old_text, 0.5)
    assert [x is None for x in forward] == [x is None for x in backward]
    assert [x.kind for x in forward if x] == [x.kind for x in backward if x]
