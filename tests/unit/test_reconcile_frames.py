"""Reconciliation reads what a differing slot is: the frame's last adjunct (rival values under
prepositions of one class, another question under another class), closed sets of rival values,
the modality and scope of one proposition, and change language that reports a new value.

The examples are of their own, not copied from the labelled sets (those are scored by
test_reconcile_labelled_pairs.py)."""

import pytest

from taskmem.core.reconcile import Decision, Outcome
from taskmem.core.reconcile_signals import (
    change_phrase,
    content_tokens,
    find_contrast,
    find_distinction,
    named_replacements,
)
from tests.unit.reconcile_support import decide_pair, thresholds

T = thresholds()


def decide(old_text: str, new_text: str, cosine: float, kind: str = "decision", from_user: bool = False) -> Decision:
    return decide_pair(old_text, new_text, cosine, T, kind, from_user)


# ------------------------------------------------------------------ the last adjunct


# ------------------------------------------------------------------ rival values, poles, modality, scope

@pytest.mark.parametrize("old_text, new_text", [
    ("Wire the speakers in series", "Wire the speakers in parallel"),
    ("Salt the soup sparingly", "Add plenty of salt to the soup"),
])
def test_rival_values_and_opposite_poles_are_contrasts_in_either_order(old_text: str, new_text: str) -> None:
    assert find_contrast(old_text, new_text, 0.5) is not None
    assert find_contrast(new_text, old_text, 0.5) is not None


def test_a_rival_value_that_modifies_a_shared_noun_picks_out_another_thing() -> None:
    assert find_contrast("Email the gold members", "Email the silver members", 0.5) is None
    assert find_contrast("What is the budget for the spring fair?", "What is the budget for the winter fair?",
                         0.5) is None


@pytest.mark.parametrize("old_text, new_text, old_mode, new_mode", [
    ("Badges are optional for visitors", "Visitors must wear badges", "open", "required"),
    ("Guests may bring their dogs into the lounge", "Dogs are not allowed in the lounge", "open", "forbidden"),
])
def test_one_proposition_under_another_modality_is_a_contrast(old_text: str, new_text: str, old_mode: str,
                                                              new_mode: str) -> None:
    contrast = find_contrast(old_text, new_text, 0.5)
    assert contrast is not None and (contrast.kind, contrast.old_value, contrast.new_value) == \
        ("modality", old_mode, new_mode)


def test_modality_of_two_different_propositions_is_no_contrast() -> None:
    assert find_contrast("Tests must not call the network", "The suite has to run on a laptop", 0.5) is None


def test_a_date_convention_is_one_word() -> None:
    assert "dmyformat" in content_tokens("Dates are written day/month/year")
    assert "ymdformat" in content_tokens("Dates are written YYYY-MM-DD")


# ------------------------------------------------------------------ change language

def test_change_as_a_noun_is_no_change_language_but_a_change_of_plan_is() -> None:
    assert change_phrase("Tyres are checked at every oil change") is None
    assert change_phrase("At each change of shift the keys are counted") is None
    assert change_phrase("Change of plan: the tour starts in Lyon") == "change"


def test_a_value_raised_from_one_number_to_another_names_the_old_one() -> None:
    assert any("5" in phrase for phrase in named_replacements("The entry fee was raised from 5 to 8 euros"))
    assert decide("The entry fee is 5 euros", "The entry fee was raised from 5 to 8 euros", 0.7,
                  kind="constraint", from_user=True).outcome is Outcome.SUPERSEDE


def test_what_is_out_is_retired_but_out_of_date_is_not() -> None:
    assert named_replacements("The paper tickets are out, mobile tickets are in") == ["the paper tickets"]
    assert named_replacements("The printer drivers are out of date") == []
