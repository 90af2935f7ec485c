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

T = ReconcileThresholds(ask=0.4, named_floor=0.3)
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
# Each row that decides alone names a blind set that shows it (tests/data/state_pairs_<set>.yaml).

def test_the_callers_supersedes_retires_the_named_item_whatever_the_words() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Cache nothing at all", refs=(), source="agent", supersedes=old.uid)], [old], 0.1)
    decision = result.decisions[0]
    assert (decision.outcome, decision.rule, decision.existing_uid) == (Outcome.SUPERSEDE, "explicit_supersedes",
                                                                         old.uid)
    assert decision.evidence["matched_by"] == "stated by the caller"


def test_an_extractors_supersedes_with_nobodys_word_behind_it_is_asked() -> None:
    old = existing("decision", "Use Redis for caching")
    unheard = run([cand("decision", "Cache nothing at all", refs=("a1",), supersedes=old.uid)], [old], 0.1)
    assert (unheard.decisions[0].outcome, unheard.decisions[0].rule) == (Outcome.ASK, "supersedes_unconfirmed")
    heard = run([cand("decision", "Cache nothing at all", refs=("u1",), supersedes=old.uid)], [old], 0.1)
    assert heard.decisions[0].outcome is Outcome.SUPERSEDE


def test_the_same_text_merges_into_the_existing_item() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "use redis for caching")], [old], 0.0)
    assert (result.decisions[0].outcome, result.decisions[0].rule) == (Outcome.MERGE, "same_uid")


@pytest.mark.parametrize(("old_text", "new_text"), [
    # blind11-007: the same words plus detail with no value in it ("tonight" adds a time, not a value slot).
    ("Upload the last three months of bank statements to the visa portal",
     "Upload the last 3 months of bank statements to the visa portal tonight"),
    ("Use Ruff for linting", "Use Ruff for linting across the whole repository"),
])
def test_the_same_words_or_the_same_plus_detail_with_no_value_merge(old_text: str, new_text: str) -> None:
    decision = run([cand("decision", new_text, refs=("a1",))], [existing("decision", old_text)], 0.8).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.MERGE, "same_words")


@pytest.mark.parametrize(("old_text", "new_text"), [
    ("Report the figures in US dollars", "Report the figures in euros rather than US dollars"),  # fresh3
    ("Run the batch loads between 22:00 and 06:00", "Run the batch loads between 06:00 and 22:00"),  # fresh3
    ("Cap uploads at 10 MB", "Cap uploads at 10 MB for the free tier"),  # a value among the extra words
    ("Only my partner may be present during labour", "My partner may be present during labour"),  # scope
    ("Use Redis for caching", "Do not use Redis for caching"),  # polarity
])
def test_a_change_hidden_in_the_same_words_is_never_merged(old_text: str, new_text: str) -> None:
    decision = run([cand("decision", new_text, refs=("a1",))], [existing("decision", old_text)], 0.9).decisions[0]
    assert decision.outcome is Outcome.ASK


@pytest.mark.parametrize(("old_text", "new_text", "words"), [
    # blind12: the user names the old value as retired, the candidate gives the new one.
    ("Can the bot answer in Spanish?", "Can the bot answer in Portuguese?",
     "Spanish can wait. The bigger question is Portuguese, we just signed a Brazilian client."),
    ("Can the consumer unit be moved to the hallway?", "Can the consumer unit be moved to the garage?",
     "What I actually want to know is whether the fuse box could go in the garage, the hallway's too cramped."),
    # blind15-022, blind15-033 (seen since its first score): "no more X", "no X".
    ("Hold the weekly sked with VK3 on 40 m, Sunday mornings.", "Hold the weekly sked with VK3 on 20 m, Saturday afternoons.",
     "No more Sunday mornings on 40 metres - from next month let's do the sked on 20 m, Saturday afternoons."),
    ("Hand-quilt the whole top.", "Have the quilt longarm-quilted by a professional.",
     "No hand quilting, my wrists can't take it - I'll send it to the longarm lady."),
    ("Use Redis for caching", "Use Memcached for caching", "Switch the cache from Redis to Memcached"),
])
def test_the_users_message_naming_the_old_value_as_retired_supersedes_it(old_text: str, new_text: str,
                                                                         words: str) -> None:
    decision = run([cand("decision", new_text)], [existing("decision", old_text)], 0.8, said(words)).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.SUPERSEDE, "names_the_old_value")
    assert decision.evidence["ref_msg_id"] == "u1" and decision.evidence["named"]


@pytest.mark.parametrize(("said_by", "outcome"), [("u1", Outcome.SUPERSEDE), ("a1", Outcome.ASK)])
def test_a_candidate_naming_what_it_replaces_supersedes_with_the_users_word_else_is_asked(
        said_by: str, outcome: Outcome) -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Use Memcached for caching instead of Redis", refs=(said_by,))], [old], 0.8)
    assert result.decisions[0].outcome is outcome


def test_an_addition_that_also_says_not_x_is_asked_not_retired() -> None:
    # blind15-076 (seen since its first score): "Also ... not the PDF" adds; the old item must not be retired.
    old = existing("action", "The macro emails the summary PDF to the finance team.")
    decision = run([cand("action", "The macro emails the raw data workbook to the audit team.")], [old], 0.63,
                   said("Also could it send the raw workbook to audit? They want the data, not the PDF.")).decisions[0]
    assert decision.outcome is Outcome.ASK


def test_the_user_who_says_it_still_stands_merges_a_restatement_with_the_same_values() -> None:
    # blind11-003: "Just to confirm ... seven rounds" restates "a 7-round Swiss".
    old = existing("decision", "The open section will run as a 7-round Swiss.")
    decision = run([cand("decision", "Open section: Swiss system, seven rounds.")], [old], 0.8,
                   said("Just to confirm for the flyer: Swiss system for the open, seven rounds.")).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.MERGE, "user_confirms")
    changed = run([cand("decision", "Open section: Swiss system, nine rounds.")], [old], 0.8,
                  said("Just to confirm: Swiss system, nine rounds.")).decisions[0]
    assert changed.outcome is Outcome.ASK  # another value: never merged on the user's "confirm"


def test_the_user_who_says_also_inserts_beside_the_near_item() -> None:
    # blind14: "Can you also add a test for password reset?" beside the e2e test for the account email.
    old = existing("action", "Add an e2e test for changing the account email.")
    decision = run([cand("action", "Add an e2e test for the password reset flow.")], [old], 0.8,
                   said("Can you also add a test for password reset? It broke last month.")).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.INSERT, "user_adds")


@pytest.mark.parametrize(("old_text", "new_text", "ref"), [
    ("Fit a chrome towel rail in the bathroom.", "Fit a white towel rail in the bathroom.", "u1"),  # another value
    ("Run the login test on staging", "Run the checkout test on staging", "a1"),  # another object
    ("Is it safe to take ibuprofen during the third trimester?",
     "Can ibuprofen be used in the last trimester of pregnancy?", "a1"),  # a similarity no rule explains
])
def test_a_near_candidate_no_certain_row_decides_is_kept_as_an_open_question(old_text: str, new_text: str,
                                                                           ref: str) -> None:
    old = existing("decision", old_text)
    result = run([cand("decision", new_text, refs=(ref,))], [old], 0.9, said("Saw the price, ouch. White's fine."))
    decision = result.decisions[0]
    assert (decision.outcome, decision.rule, decision.existing_uid) == (Outcome.ASK, "near", old.uid)
    assert "stand beside it, or say the same?" in decision.detail
    assert all(item.conflict and item.active for item in result.writes)  # both kept, both flagged


def test_unrelated_items_are_inserted_and_items_of_another_type_never_compared() -> None:
    old = existing("risk", "Use Redis for caching")
    result = run([cand("decision", "Use Redis for caching")], [old], 1.0)
    assert result.decisions[0].outcome is Outcome.INSERT and result.decisions[0].similarity is None
    far = run([cand("risk", "The venue floods in spring")], [old], 0.1)
    assert (far.decisions[0].outcome, far.decisions[0].rule) == (Outcome.INSERT, "far")


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
                  cand("decision", "Use Redis for caching in production"),
                  cand("decision", "use memcached for caching instead of redis")],
                 [old], 0.8)
    # The Redis item is retired by the first, so the second is only near the Memcached one.
    assert [d.outcome for d in result.decisions] == [Outcome.SUPERSEDE, Outcome.ASK, Outcome.MERGE]


def test_inputs_are_not_mutated() -> None:
    old = existing("decision", "Cache embeddings client-side")
    snapshot = dataclasses.replace(old)
    run([cand("decision", "Cache embeddings server-side")], [old], 0.94)
    assert old == snapshot


# ------------------------------------------------------------------ a model's answers

@pytest.mark.parametrize(("answer", "outcome"), [("replaces", Outcome.SUPERSEDE), ("stands_beside", Outcome.INSERT),
                                                 ("same", Outcome.MERGE), ("unsure", Outcome.ASK), ("", Outcome.ASK)])
def test_a_models_answer_settles_the_question_and_is_recorded(answer: str, outcome: Outcome) -> None:
    old = existing("decision", "The birth certificate will be translated by a sworn translator")
    result = run([cand("decision", "The birth certificate will be translated by the consulate's service",
                       refs=("u1",))], [old], 0.89, overrides={0: Adjudication(answer, "judge-1", "why")})
    decision = result.decisions[0]
    assert decision.outcome is outcome
    assert decision.evidence["adjudication"]["answer"] == answer
    assert decision.evidence["adjudication"]["applied"] is (outcome is not Outcome.ASK)
    if outcome is Outcome.SUPERSEDE:
        assert decision.evidence["matched_by"] == "answered by judge-1"


@pytest.mark.parametrize("ref", ["a1", ""])
def test_a_model_retires_nothing_on_the_agents_word_alone(ref: str) -> None:
    # blind15/16 replayed: every contradiction an agent, a document or a tool reported was answered "replaces";
    # kept open instead, for the caller or a person to answer.
    old = existing("risk", "The pressure canner's dial gauge may be reading low.")
    decision = run([cand("risk", "The extension office tested the dial gauge: accurate to within 1 psi.",
                         refs=(ref,) if ref else ())], [old], 0.6,
                   overrides={0: Adjudication("replaces", "judge-1")}).decisions[0]
    assert decision.outcome is Outcome.ASK and decision.evidence["adjudication"]["applied"] is False
    assert "needs the user's word" in decision.evidence["adjudication"]["error"]


def test_a_models_answer_never_overrides_a_certain_decision() -> None:
    old = existing("decision", "Use Redis for caching")
    decision = run([cand("decision", "use redis for caching")], [old], 1.0,
                   overrides={0: Adjudication("replaces", "judge-1")}).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.MERGE, "same_uid")


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
            assert decision.evidence["ref_msg_id"] == "u1"  # never on the agent's word alone
    for uid, item in by_uid.items():
        if item.status == "superseded":
            superseded_at = next(i for i, d in enumerate(result.decisions)
                                 if d.outcome is Outcome.SUPERSEDE and d.existing_uid == uid)
            assert all(i < superseded_at for i, d in enumerate(result.decisions)
                       if d.existing_uid == uid and d.outcome is Outcome.MERGE)
