"""The reconciliation pipeline: each candidate gets one auditable decision, by the policy table of core/reconcile."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskmem.core.reconcile import (
    Adjudication,
    BatchMessage,
    Outcome,
    ReconcileResult,
    ReconcileThresholds,
    prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.state_items import Candidate, StateItem, validate_item

T = ReconcileThresholds(merge=0.66, conflict=0.4, alignment=0.5, named_floor=0.3)
BATCH = {"u1": BatchMessage(100, from_user=True), "u2": BatchMessage(200, from_user=True),
         "a1": BatchMessage(150, from_user=False)}


def existing(kind: str, text: str, status: str = "", tags: tuple[str, ...] = ()) -> StateItem:
    item = validate_item(Candidate(kind, text, status=status, confidence="medium", refs=("old",),
                                   topic_tags=tags)).item
    assert item is not None
    return item


def run(candidates: list[Candidate], items: list[StateItem], cosine: float | dict[tuple[str, str], float],
        batch: dict[str, BatchMessage] | None = None, overrides: dict[int, Adjudication] | None = None,
        ) -> ReconcileResult:
    """Reconcile with a fixed cosine for every pair, or one per (candidate text, other text)."""
    def similarity(a: StateItem, b: StateItem) -> float:
        if isinstance(cosine, dict):
            return cosine.get((a.text, b.text), 0.0)
        return cosine
    prepared = prepare_candidates(candidates, batch or BATCH, refs_required=False)
    return reconcile_candidates(prepared, items, similarity, T, now=7, overrides=overrides)


def cand(kind: str, text: str, refs: tuple[str, ...] = ("u1",), **fields: object) -> Candidate:
    return Candidate(kind, text, confidence="high", refs=refs, **fields)  # type: ignore[arg-type]


def said(words: str) -> dict[str, BatchMessage]:
    """A batch whose user message u1 says `words`."""
    return {**BATCH, "u1": BatchMessage(100, from_user=True, text=words)}


# ------------------------------------------------------------------ preparation

def test_only_25_candidates_are_considered_the_rest_are_dropped() -> None:
    prepared = prepare_candidates([cand("risk", f"risk number {n}") for n in range(30)], BATCH)
    assert len(prepared.items) == 25
    assert [d.rule for d in prepared.drops] == ["over_cap"] * 5


def test_invalid_items_and_items_whose_refs_are_not_in_the_batch_are_dropped() -> None:
    prepared = prepare_candidates([cand("wish", "x"), cand("risk", ""), cand("risk", "real", refs=("zz",))], BATCH)
    assert [d.rule for d in prepared.drops] == ["invalid", "invalid", "no_valid_refs"] and not prepared.items


def test_an_agents_item_may_cite_nothing_and_takes_the_time_of_the_run() -> None:
    result = run([cand("risk", "The disk may fill up", refs=())], [], 0.0)
    assert result.decisions[0].outcome is Outcome.INSERT and result.writes[0].created_at == 7


def test_an_item_is_as_fresh_as_its_newest_ref() -> None:
    prepared = prepare_candidates([cand("risk", "The disk may fill up", refs=("u1", "u2"))], BATCH)
    assert prepared.items[0].created_at == prepared.items[0].last_seen_at == 200


# ------------------------------------------------------------------ the policy table, row by row

def test_the_callers_supersedes_retires_the_named_item_whatever_the_words() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Cache nothing at all", refs=(), source="agent", supersedes=old.uid)], [old], 0.1)
    decision = result.decisions[0]
    assert (decision.outcome, decision.rule, decision.existing_uid) == (Outcome.SUPERSEDE, "explicit_supersedes",
                                                                         old.uid)
    assert decision.evidence["matched_by"] == "stated by the caller"


def test_an_extractors_supersedes_needs_the_users_word_behind_it() -> None:
    old = existing("decision", "Use Redis for caching")
    unheard = run([cand("decision", "Cache nothing at all", refs=("a1",), supersedes=old.uid)], [old], 0.1)
    assert unheard.decisions[0].outcome is Outcome.INSERT
    heard = run([cand("decision", "Cache nothing at all", refs=("u1",), supersedes=old.uid)], [old], 0.1)
    assert heard.decisions[0].outcome is Outcome.SUPERSEDE


def test_the_same_text_merges_into_the_existing_item() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "use redis for caching")], [old], 0.0)
    assert (result.decisions[0].outcome, result.decisions[0].rule) == (Outcome.MERGE, "same_uid")


@pytest.mark.parametrize(("said_by", "outcome"), [("u1", Outcome.SUPERSEDE), ("a1", Outcome.CONFLICT)])
def test_a_candidate_that_names_what_it_replaces_supersedes_with_the_users_word_else_conflicts(
        said_by: str, outcome: Outcome) -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Use Memcached for caching instead of Redis", refs=(said_by,))], [old], 0.8)
    decision = result.decisions[0]
    assert (decision.outcome, decision.rule) == (outcome, "names_what_it_replaces")


@pytest.mark.parametrize(("old_text", "new_text"), [
    ("Rent 40 chess clocks from the association", "Rent 55 chess clocks from the association"),
    ("Can the wasp nest be removed on Monday?", "Can the wasp nest be removed on Wednesday?"),
    ("Scans are made at 300 dpi", "Scans are made at 600 dpi"),
])
def test_the_users_newest_value_of_a_slot_supersedes_with_no_change_words(old_text: str, new_text: str) -> None:
    old = existing("decision", old_text)
    decision = run([cand("decision", new_text)], [old], 0.95).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.SUPERSEDE, "another_value")
    assert decision.evidence["ref_msg_id"] == "u1" and decision.evidence["contrast"]["kind"]


def test_the_same_contrast_from_the_agent_alone_is_a_conflict_flagged_on_both_sides() -> None:
    old = existing("constraint", "Scans are made at 300 dpi")
    result = run([cand("constraint", "Scans are made at 600 dpi", refs=("a1",))], [old], 0.95)
    assert (result.decisions[0].outcome, result.decisions[0].rule) == (Outcome.CONFLICT, "another_value")
    assert all(item.conflict for item in result.writes) and len(result.writes) == 2


def test_a_contrast_counts_only_from_the_conflict_threshold() -> None:
    old = existing("constraint", "Scans are made at 300 dpi")
    assert run([cand("constraint", "Scans are made at 600 dpi")], [old], 0.39).decisions[0].outcome is Outcome.INSERT


def test_the_user_who_names_the_old_value_while_asking_for_a_new_one_supersedes_it() -> None:
    old = existing("decision", "Fit a chrome towel rail in the bathroom")
    batch = said("Saw the price of the chrome one, ouch. White is fine.")
    decision = run([cand("decision", "Fit a white towel rail in the bathroom")], [old], 0.95, batch).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.SUPERSEDE, "user_names_the_old_value")
    assert decision.evidence["named"] == ["chrom"]


def test_a_user_who_restates_an_item_in_other_words_merges_into_it() -> None:
    old = existing("decision", "All observation timestamps are recorded in UTC")
    batch = said("Yes, stick with UTC for all the timestamps.")
    decision = run([cand("decision", "Observation timestamps are stored in UTC")], [old], 0.9, batch).decisions[0]
    assert decision.outcome is Outcome.MERGE


def test_a_near_candidate_no_rule_links_is_inserted_naming_its_possible_rival_and_put_to_the_judge() -> None:
    old = existing("constraint", "Tests must not require internet access")
    offline = cand("constraint", "The test suite has to run offline", refs=("a1",))
    near = run([offline], [old], 0.59).decisions[0]
    assert (near.outcome, near.rule, near.nearest_uid) == (Outcome.INSERT, "no_match", old.uid) and near.uncertain
    assert old.uid in near.detail and f"supersedes: {old.uid}" in near.detail
    judged = run([offline], [old], 0.59, overrides={0: Adjudication("merge", old.uid, "judge")}).decisions[0]
    assert (judged.outcome, judged.existing_uid) == (Outcome.MERGE, old.uid)
    far = run([offline], [old], 0.44).decisions[0]
    assert far.outcome is Outcome.INSERT and not far.uncertain and not far.detail


@pytest.mark.parametrize("new_text", ["Cache with Redis", "Caching uses Redis"])
def test_a_paraphrase_merges_from_the_paraphrase_floor(new_text: str) -> None:
    old = existing("decision", "Use Redis for caching")
    assert run([cand("decision", new_text)], [old], 0.41).decisions[0].outcome is Outcome.MERGE
    assert run([cand("decision", new_text)], [old], 0.39).decisions[0].outcome is Outcome.INSERT


@pytest.mark.parametrize(("old_text", "new_text"), [
    ("The birth certificate will be translated by a sworn translator",
     "The birth certificate will be translated by the consulate's own translation service"),
    ("Only my partner may be present during labour", "My partner and my mother may be present during labour"),
    ("The installer must not require administrator rights", "The installer requires administrator rights"),
])
def test_a_contradiction_is_never_merged_however_similar(old_text: str, new_text: str) -> None:
    old = existing("constraint", old_text)
    for cosine in (0.7, 0.9, 0.99):
        for ref in ("u1", "a1"):
            decision = run([cand("constraint", new_text, refs=(ref,))], [old], cosine).decisions[0]
            assert decision.outcome in (Outcome.SUPERSEDE, Outcome.CONFLICT), (cosine, ref, decision)


def test_every_conflict_and_every_merge_on_similarity_alone_is_marked_uncertain_for_the_judge() -> None:
    old = existing("decision", "The birth certificate will be translated by a sworn translator")
    conflict = run([cand("decision", "The birth certificate will be translated by the consulate's service",
                         refs=("a1",))], [old], 0.89).decisions[0]
    assert conflict.outcome is Outcome.CONFLICT and conflict.uncertain
    pool = existing("action", "Set up connection pooling for the API database")
    duplicate = run([cand("action", "Configure a connection pool for the API's database")], [pool],
                    0.9).decisions[0]
    assert (duplicate.outcome, duplicate.rule) == (Outcome.MERGE, "duplicate") and duplicate.uncertain
    heard = run([cand("decision", "The birth certificate will be translated by the consulate's service")], [old],
                0.89).decisions[0]
    assert heard.outcome is Outcome.SUPERSEDE and not heard.uncertain


def test_the_same_frame_about_another_object_is_a_new_item() -> None:
    old = existing("action", "Run the login test on staging")
    decision = run([cand("action", "Run the checkout test on staging", refs=("a1",))], [old], 0.9).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.INSERT, "distinct")
    assert decision.evidence["distinct"]["kind"] == "object"


def test_unrelated_items_are_inserted_and_items_of_another_type_never_compared() -> None:
    old = existing("risk", "Use Redis for caching")
    result = run([cand("decision", "Use Redis for caching")], [old], 1.0)
    assert result.decisions[0].outcome is Outcome.INSERT and result.decisions[0].similarity is None
    far = run([cand("risk", "The venue floods in spring")], [old], 0.1)
    assert (far.decisions[0].outcome, far.decisions[0].rule) == (Outcome.INSERT, "no_match")


def test_a_superseded_item_is_never_compared_nor_resurrected() -> None:
    gone = existing("decision", "Use Redis for caching")
    gone.status = "superseded"
    paraphrase = run([cand("decision", "Cache with Redis")], [gone], 0.99)
    assert paraphrase.decisions[0].outcome is Outcome.INSERT and paraphrase.decisions[0].similarity is None
    same_text = run([cand("decision", "Use Redis for caching")], [gone], 0.99)
    decision = same_text.decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.DROP, "resurrects_superseded") and not same_text.writes


def test_later_candidates_of_a_batch_see_the_earlier_ones() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Use Memcached for caching instead of Redis"),
                  cand("decision", "Cache with Redis"),
                  cand("decision", "Cache with Memcached instead of Redis")],
                 [old], {("Use Memcached for caching instead of Redis", "Use Redis for caching"): 0.8,
                         ("Cache with Redis", "Use Redis for caching"): 0.9,
                         ("Cache with Memcached instead of Redis", "Use Memcached for caching instead of Redis"): 0.95})
    # The Redis item is retired by the first, so the second finds nothing live to merge with.
    assert [d.outcome for d in result.decisions] == [Outcome.SUPERSEDE, Outcome.INSERT, Outcome.MERGE]


def test_inputs_are_not_mutated() -> None:
    old = existing("decision", "Cache embeddings client-side")
    snapshot = dataclasses.replace(old)
    run([cand("decision", "Cache embeddings server-side")], [old], 0.94)
    assert old == snapshot


# ------------------------------------------------------------------ the judge's answers

def test_a_judges_answer_applies_and_is_recorded() -> None:
    old = existing("decision", "The birth certificate will be translated by a sworn translator")
    answer = Adjudication("merge", old.uid, "judge-1", "same translator")
    decision = run([cand("decision", "The birth certificate will be translated by the consulate's service",
                         refs=("a1",))], [old], 0.89, overrides={0: answer}).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.MERGE, "adjudicated")
    assert decision.evidence["adjudication"]["builtin"]["outcome"] == "conflict"


def test_a_judge_cannot_supersede_without_the_users_word() -> None:
    old = existing("decision", "Use Redis for caching")
    answer = Adjudication("supersede", old.uid, "judge-1")
    decision = run([cand("decision", "Use Redis for caching everywhere", refs=("a1",))], [old], 0.95,
                   overrides={0: answer}).decisions[0]
    assert decision.outcome is not Outcome.SUPERSEDE
    assert decision.evidence["adjudication"]["applied"] is False


# ------------------------------------------------------------------ properties

TEXTS = ["Use Redis for caching", "Cache with Redis", "Use Memcached for caching instead of Redis",
         "Cache embeddings client-side", "Cache embeddings server-side", "Deploy on Friday",
         "Deploy on Monday instead of Friday", "Store timestamps in UTC", "No longer store timestamps in UTC"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TEXTS), st.sampled_from(["u1", "a1"])), min_size=1, max_size=12),
       st.integers(0, 2**32))
def test_batches_never_resurrect_never_supersede_unheard_and_decide_every_candidate_once(
        picks: list[tuple[str, str]], seed: int) -> None:
    import random
    rng = random.Random(seed)
    cosines: dict[frozenset[str], float] = {}

    def similarity(a: StateItem, b: StateItem) -> float:
        return cosines.setdefault(frozenset((a.text, b.text)), rng.uniform(-0.1, 1.0))

    first = run([cand("decision", TEXTS[0])], [], 0.0).writes
    prepared = prepare_candidates([cand("decision", text, refs=(ref,)) for text, ref in picks], BATCH)
    result = reconcile_candidates(prepared, first, similarity, T)
    assert len(result.decisions) == len(picks)
    by_uid = {item.uid: item for item in result.writes}
    for decision in result.decisions:
        if decision.outcome is Outcome.SUPERSEDE:
            assert decision.evidence["ref_msg_id"] == "u1"
    for uid, item in by_uid.items():
        if item.status == "superseded":
            superseded_at = next(i for i, d in enumerate(result.decisions)
                                 if d.outcome is Outcome.SUPERSEDE and d.existing_uid == uid)
            assert all(i < superseded_at for i, d in enumerate(result.decisions)
                       if d.existing_uid == uid and d.outcome is Outcome.MERGE)
