"""Reconciliation knows what breaks a stated design property, reads spelled-out values as numbers,
keeps only a replaced final object apart, and does not take a participle that modifies a noun
for change language.

The examples are of their own, not copied from the labelled sets (those are scored by
test_reconcile_labelled_pairs.py)."""

import pytest

from taskmem.core.reconcile import Decision, Outcome
from taskmem.core.reconcile_signals import (
    change_phrase,
    content_tokens,
    find_contrast,
    named_replacements,
    property_contrast,
)
from tests.unit.reconcile_support import decide_pair, thresholds

T = thresholds()


def decide(old_text: str, new_text: str, cosine: float, kind: str = "decision", from_user: bool = False) -> Decision:
    return decide_pair(old_text, new_text, cosine, T, kind, from_user)


# ------------------------------------------------------------------ properties and their violations

@pytest.mark.parametrize("old_text, new_text, name", [
    ("The pricing API is stateless", "The pricing API holds each quote in local memory between calls", "stateless"),
    ("Every import job must be idempotent", "The import job inserts the invoices again on each retry", "idempotent"),
    ("The audit log is append-only", "The cleanup task updates old entries in the audit log in place", "immutable"),
    ("The tax calculator runs entirely offline", "The tax calculator fetches current rates from the vendor API",
     "offline"),
    ("Backups are encrypted", "Backups are written to the share in plain text", "encrypted"),
    ("The staff survey is anonymous", "The staff survey records each respondent's email address", "anonymous"),
    ("The reception menu is vegetarian", "The reception menu includes chicken skewers", "vegetarian"),
    ("The school fete is alcohol-free", "The school fete has a prosecco stall", "alcohol-free"),
])
def test_a_statement_that_breaks_a_stated_property_is_a_contrast_in_either_order(
        old_text: str, new_text: str, name: str) -> None:
    for a, b in ((old_text, new_text), (new_text, old_text)):
        contrast = property_contrast(a, b)
        assert contrast is not None and contrast.kind == "property", (a, b)
        assert name in contrast.old_value + contrast.new_value


@pytest.mark.parametrize("old_text, new_text", [
    # another subject: the same noun with another modifier
    ("The pricing service is stateless", "The search service keeps results in memory between requests"),
    # the violation is negated
    ("The pricing API is stateless", "The pricing API never keeps quotes in memory between calls"),
    # nothing in common but the property's words
    ("The reception menu is vegetarian", "Book a table for the salmon tasting in May"),
    # both state the property
    ("Backups are encrypted", "Backups are encrypted with a key kept off site, never in plain text"),
])
def test_no_property_contrast_without_one_subject_and_one_affirmed_violation(old_text: str, new_text: str) -> None:
    assert property_contrast(old_text, new_text) is None
    assert property_contrast(new_text, old_text) is None


def test_a_violation_far_in_meaning_still_conflicts_and_says_why() -> None:
    decision = decide("Every import job must be idempotent", "The import job inserts the invoices again on each retry",
                      0.2, kind="constraint")
    assert decision.outcome is Outcome.CONFLICT
    assert decision.evidence["contrast"]["kind"] == "property"
    # Below the property floor nothing is compared.
    assert decide("Every import job must be idempotent", "The import job inserts the invoices again on each retry",
                  0.05, kind="constraint").outcome is Outcome.INSERT


def test_a_violation_with_change_language_from_a_user_supersedes() -> None:
    decision = decide("The pricing API is stateless",
                      "The pricing API now holds each quote in local memory between calls", 0.45, from_user=True)
    assert decision.outcome is Outcome.SUPERSEDE


# ------------------------------------------------------------------ values said in words

@pytest.mark.parametrize("spelled, digits", [
    ("The hall seats four hundred and twenty guests", "The hall seats 420 guests"),
    ("Simulate twelve thousand sessions", "Simulate 12k sessions"),
    ("Answer within half an hour", "Answer within 30 minutes"),
    ("The race closes after 7 h", "The race closes after seven hours"),
])
def test_a_value_spelled_out_reads_as_its_number(spelled: str, digits: str) -> None:
    assert content_tokens(spelled) == content_tokens(digits)


# ------------------------------------------------------------------ rewording against another object

def test_a_reworded_verb_merges_but_a_replaced_final_object_is_never_merged_away() -> None:
    assert decide("Who maintains the billing service?", "Which team is in charge of the billing service?", 0.8,
                  kind="question").outcome is Outcome.MERGE
    kept = decide("Push firmware 4.1 to the gateways", "Push firmware 4.1 to the smoke alarms", 0.75, kind="action")
    assert kept.outcome is Outcome.CONFLICT and kept.uncertain  # another object or another value: the judge asks


# ------------------------------------------------------------------ participles

@pytest.mark.parametrize("text", [
    "Increased latency on the search page after each deploy",
    "Reduced staffing over the holidays may slow refunds",
    "The cancelled orders are refunded within five days",
    "Risk of dropped packets on the office VPN",
])
def test_a_participle_that_modifies_a_noun_is_no_change_language(text: str) -> None:
    assert change_phrase(text) is None


@pytest.mark.parametrize("text", [
    "The stand-up was cancelled",
    "The page size is reduced to 20 rows",
    "Error rates increased after the release",
    "We dropped the nightly export",
])
def test_a_participle_that_reports_a_change_is_change_language(text: str) -> None:
    assert change_phrase(text) is not None


def test_a_risk_restated_with_a_participle_merges_instead_of_superseding() -> None:
    decision = decide("Latency on the search page may rise after deploys",
                      "Increased latency on the search page after deploys", 0.8, kind="risk")
    assert decision.outcome is Outcome.MERGE


# ------------------------------------------------------------------ paraphrases cosine puts apart


@pytest.mark.parametrize("old_text, new_text", [
    ("Service the boilers in the east wing", "Clean the boilers in the east wing"),  # another verb
    ("Roses for the June weddings come from Kenya", "Lilies for the June weddings come from Kenya"),  # another subject
    ("Renew the TLS certificates once a year", "Renew the TLS certificates once a month"),  # another value
])
def test_a_word_the_other_text_lacks_on_each_side_is_no_paraphrase(old_text: str, new_text: str) -> None:
    assert decide(old_text, new_text, 0.55, kind="action").outcome is not Outcome.MERGE


@pytest.mark.parametrize("text", [
    "The ferry timetable was cut to two crossings a day",
    "Ticket prices are up from 12 to 15 euros",
    "From now on the stand-up starts at 9:30",
    "The ban on laptops in lectures was lifted",
    "No more paper tickets at the door",
    "Previously the gate opened at 8; it opens at 7",
    "The night shift takes over the dispatch desk",
    "Fax orders are being phased out",
])
def test_everyday_change_language_is_recognised(text: str) -> None:
    assert change_phrase(text) is not None


def test_cut_as_an_action_is_no_change_language() -> None:
    assert change_phrase("Cut the fabric along the marked line") is None


# ------------------------------------------------------------------ levels, ranks, modes and opposite forms

@pytest.mark.parametrize("old_text, new_text", [
    ("A power cut during the exam is a high risk", "A power cut during the exam is highly unlikely"),
    ("Repairs for hospitals get top priority", "Repairs for hospitals are scheduled after all other repairs"),
])
def test_rival_modes_levels_ranks_and_opposite_forms_are_contrasts(old_text: str, new_text: str) -> None:
    for a, b in ((old_text, new_text), (new_text, old_text)):
        assert find_contrast(a, b, 0.5) is not None, (a, b)


@pytest.mark.parametrize("old_text, new_text", [
    ("The import script logs every request at verbose level", "The import script runs quietly and prints only a summary"),
    ("Database upgrades happen only during business hours", "Database upgrades are done overnight"),
])
def test_logging_detail_and_working_hours_are_properties_too(old_text: str, new_text: str) -> None:
    contrast = property_contrast(old_text, new_text)
    assert contrast is not None and contrast.kind == "property"


# ------------------------------------------------------------------ questions and corrections


def test_a_correction_names_what_it_is_not_and_supersedes_it() -> None:
    assert named_replacements("Bill the hours in euros, not dollars") == ["dollars"]
    decision = decide("Bill the hours in dollars", "Bill the hours in euros, not dollars", 0.7, from_user=True)
    assert decision.outcome is Outcome.SUPERSEDE and decision.rule == "names_what_it_replaces"


@pytest.mark.parametrize("old_text, new_text", [
    ("Dependency upgrades must be reviewed by a maintainer", "Dependency upgrades are auto-merged when the tests pass"),
    ("The clinic is open by appointment only", "Walk-ins are welcome at the clinic on Fridays"),
    ("Conference tickets are non-refundable", "Conference tickets are refunded in full up to a week before"),
])
def test_everyday_rules_and_what_breaks_them(old_text: str, new_text: str) -> None:
    contrast = property_contrast(old_text, new_text)
    assert contrast is not None and contrast.kind == "property"


