"""Reconciliation reads what a differing slot is: the frame's last adjunct (rival values under
prepositions of one class, another question under another class), closed sets of rival values,
the modality and scope of one proposition, and change language that reports a new value.

The examples are of their own, not copied from the labelled sets (those are scored by
test_reconcile_labelled_pairs.py)."""

import pytest

from taskmem.core.reconcile import Decision, Outcome
from taskmem.core.reconcile_signals import (
    adjunct_slot,
    change_phrase,
    content_tokens,
    find_contrast,
    find_distinction,
    named_replacements,
)
from tests.unit.reconcile_support import decide_pair, thresholds

T = thresholds(0.9)


def decide(old_text: str, new_text: str, cosine: float, kind: str = "decision") -> Decision:
    return decide_pair(old_text, new_text, cosine, T, kind)


# ------------------------------------------------------------------ the last adjunct

@pytest.mark.parametrize("old_text, new_text", [
    ("Ship the spare parts in crates", "Ship the spare parts in sacks"),
    ("Hold the workshop at the head office", "Hold the workshop in the park"),
    ("Settle the invoices before the audit", "Settle the invoices after the audit"),
])
def test_other_values_of_the_last_adjunct_are_rival_choices(old_text: str, new_text: str) -> None:
    assert find_contrast(old_text, new_text, 0.5) is not None
    assert find_contrast(new_text, old_text, 0.5) is not None
    decision = decide(old_text, new_text, 0.8)
    assert decision.outcome is Outcome.CONFLICT
    assert decision.detail  # the report names the slot that differs


def test_a_last_adjunct_that_answers_another_question_is_another_statement() -> None:
    slot = adjunct_slot("Bill the customers per hour", "Bill the customers within 14 days")
    assert slot is not None and slot.kind == "slot"
    assert find_contrast("Bill the customers per hour", "Bill the customers within 14 days", 0.5) is None
    decision = decide("Bill the customers per hour", "Bill the customers within 14 days", 0.8)
    assert (decision.outcome, decision.rule) == (Outcome.INSERT, "distinct")  # never merged as a duplicate


def test_a_shared_noun_after_the_slot_or_a_code_path_in_it_names_an_object() -> None:
    assert adjunct_slot("Fix the crash in the login page", "Fix the crash in the signup page") is None
    assert adjunct_slot("Add a unique index on accounts.email", "Add a unique index on orders.ref") is None
    assert decide("Add a unique index on accounts.email", "Add a unique index on orders.ref", 0.6,
                  kind="action").outcome is Outcome.INSERT


def test_a_numbered_thing_without_an_article_is_a_designator_but_a_code_is_a_value() -> None:
    distinction = find_distinction("Repaint room 7 of the school", "Repaint room 9 of the school", 0.5)
    assert distinction is not None and distinction.kind == "designator"
    assert find_contrast("Should the API answer 500 for timeouts?", "Should the API answer 503 for timeouts?",
                         0.5) is not None


# ------------------------------------------------------------------ rival values, poles, modality, scope

@pytest.mark.parametrize("old_text, new_text", [
    ("Retries back off exponentially", "Retries back off linearly"),
    ("Wire the speakers in series", "Wire the speakers in parallel"),
    ("The reception headset is wireless", "The reception headset is wired"),
    ("Invoices print dates as dd/mm/yyyy", "Invoices print dates in ISO 8601"),
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


def test_everyone_against_only_some_is_a_contrast_of_scope() -> None:
    contrast = find_contrast("Any engineer may approve a release", "Only the on-call lead may approve a release", 0.5)
    assert contrast is not None and contrast.kind == "scope"


def test_one_predicate_of_two_subjects_is_no_contrast() -> None:
    assert find_contrast("Interns can borrow laptops for two weeks", "Contractors can borrow laptops for one week",
                         0.5) is None


def test_one_subjects_window_in_other_words_is_a_contrast() -> None:
    contrast = find_contrast("Nightly backups run only between 01:00 and 04:00",
                             "Nightly backups run only in the lunch break, from 12:00 to 13:00", 0.5)
    assert contrast is not None and contrast.kind == "number"


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
                  kind="constraint").outcome is Outcome.SUPERSEDE


def test_what_is_out_is_retired_but_out_of_date_is_not() -> None:
    assert named_replacements("The paper tickets are out, mobile tickets are in") == ["the paper tickets"]
    assert named_replacements("The printer drivers are out of date") == []
