"""Deterministic reconciliation: each candidate gets one auditable decision."""

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskmem.core.reconcile_decisions import (
    SEED_THRESHOLDS,
    BatchMessage,
    Outcome,
    ReconcileResult,
    ReconcileThresholds,
    decide_as_seed,
    prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.reconcile_signals import find_contrast, named_replacements
from taskmem.core.state_items import Candidate, StateItem, compute_uid, validate_item

T = ReconcileThresholds(merge=0.66, conflict=0.4, alignment=0.5, named_floor=0.3, unnamed_supersede=0.6,
                        distinct_object_merge=0.85)
BATCH = {"u1": BatchMessage(100, from_user=True), "u2": BatchMessage(200, from_user=True),
         "a1": BatchMessage(150, from_user=False)}


def existing(kind: str, text: str, status: str = "", tags: tuple[str, ...] = ()) -> StateItem:
    item = validate_item(Candidate(kind, text, status=status, confidence="medium", refs=("old",),
                                   topic_tags=tags)).item
    assert item is not None
    return item


def run(candidates: list[Candidate], items: list[StateItem], cosine: float | dict[tuple[str, str], float],
        thresholds: ReconcileThresholds = T) -> ReconcileResult:
    """Reconcile with a fixed cosine for every pair, or one per (candidate text, other text)."""
    def similarity(a: StateItem, b: StateItem) -> float:
        if isinstance(cosine, dict):
            return cosine.get((a.text, b.text), 0.0)
        return cosine
    return reconcile_candidates(prepare_candidates(candidates, BATCH), items, similarity, thresholds)


def cand(kind: str, text: str, refs: tuple[str, ...] = ("u1",), **fields: object) -> Candidate:
    return Candidate(kind, text, confidence="high", refs=refs, **fields)  # type: ignore[arg-type]


# ------------------------------------------------------------------ preparation

def test_only_25_candidates_are_considered_the_rest_are_dropped() -> None:
    prepared = prepare_candidates([cand("action", f"Task number {i}") for i in range(30)], BATCH)
    assert len(prepared.items) == 25 and prepared.extracted == 30
    assert [d.rule for d in prepared.drops] == ["over_cap"] * 5


def test_invalid_items_and_items_without_a_ref_in_the_batch_are_dropped() -> None:
    prepared = prepare_candidates([cand("opinion", "Nice"), cand("decision", "Use Redis", refs=("made-up",)),
                                   cand("decision", "Use Kafka", refs=("made-up", "a1"))], BATCH)
    assert [d.rule for d in prepared.drops] == ["invalid", "no_valid_refs"]
    assert [(i.text, i.refs) for i in prepared.items] == [("Use Kafka", ["a1"])]


def test_an_item_is_as_fresh_as_its_newest_ref() -> None:
    item = prepare_candidates([cand("risk", "Disk fills up", refs=("u1", "u2"))], BATCH).items[0]
    assert item.created_at == item.last_seen_at == 200


# ------------------------------------------------------------------ merge, insert and the merge band

def test_the_same_text_merges_into_the_existing_item() -> None:
    old = existing("decision", "Use Redis for caching", tags=("cache",))
    result = run([cand("decision", '- "use redis for caching"', refs=("u2",), topic_tags=["perf"])], [old], 0.0)
    decision = result.decisions[0]
    assert (decision.outcome, decision.existing_uid, decision.rule) == (Outcome.MERGE, old.uid, "same_uid")
    (merged,) = result.writes
    assert merged.refs == ["old", "u2"] and merged.topic_tags == ["cache", "perf"] and not result.inserted


@pytest.mark.parametrize("cosine, outcome", [(0.66, Outcome.MERGE), (0.70, Outcome.MERGE), (0.6599, Outcome.INSERT)])
def test_a_paraphrase_merges_at_and_above_the_merge_threshold_only(cosine: float, outcome: Outcome) -> None:
    old = existing("action", "Set up connection pooling for the API database")
    result = run([cand("action", "Configure a connection pool for the API's database")], [old], cosine)
    assert result.decisions[0].outcome is outcome
    assert result.decisions[0].similarity == pytest.approx(cosine)


def test_an_overlapping_topic_adds_exactly_002() -> None:
    old = existing("action", "Set up connection pooling for the API database", tags=("db",))
    below = run([cand("action", "Configure a connection pool for the API's database", topic_tags=["db"])],
                [old], 0.635)
    assert below.decisions[0].outcome is Outcome.INSERT and below.decisions[0].score == pytest.approx(0.655)
    lifted = run([cand("action", "Configure a connection pool for the API's database", topic_tags=["DB"])],
                 [old], 0.641)
    assert lifted.decisions[0].outcome is Outcome.MERGE and lifted.decisions[0].score == pytest.approx(0.661)


def test_unrelated_items_are_inserted() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Store timestamps in UTC")], [old], 0.05)
    assert result.decisions[0].outcome is Outcome.INSERT and result.inserted == [result.decisions[0].candidate_uid]


def test_the_same_frame_about_a_different_object_is_a_different_item() -> None:
    old = existing("action", "Fix the flaky login test")
    assert run([cand("action", "Fix the flaky checkout test")], [old], 0.84).decisions[0].outcome is Outcome.INSERT
    assert run([cand("action", "Fix the flaky checkout test")], [old], 0.85).decisions[0].outcome is Outcome.MERGE


def test_items_of_another_type_are_never_compared() -> None:
    old = existing("question", "Use Redis for caching?")
    result = run([cand("decision", "Use Redis for caching")], [old], 0.99)
    assert result.decisions[0].outcome is Outcome.INSERT and result.decisions[0].similarity is None


# ------------------------------------------------------------------ contrast: conflict, never merge

@pytest.mark.parametrize("old_text, new_text", [
    ("Cache embeddings client-side", "Cache embeddings server-side"),
    ("Use Redis for caching", "Use Memcached for caching"),
    ("Deploy the release on Friday", "Deploy the release on Monday"),
    ("Uploads are limited to 25 MB", "Uploads are limited to 10 MB"),
    ("Logs may include user email addresses", "Logs must not include user email addresses"),
])
def test_a_contrasting_pair_is_a_conflict_on_both_sides_even_above_the_merge_threshold(
        old_text: str, new_text: str) -> None:
    old = existing("decision", old_text)
    result = run([cand("decision", new_text)], [old], 0.94)
    decision = result.decisions[0]
    assert (decision.outcome, decision.existing_uid, decision.rule) == (Outcome.CONFLICT, old.uid, "contrast")
    assert decision.evidence["contrast"]["kind"] in {"antonym", "name", "number", "negation"}
    assert all(item.conflict for item in result.writes) and len(result.writes) == 2


@pytest.mark.parametrize("cosine, outcome", [(0.40, Outcome.CONFLICT), (0.3999, Outcome.INSERT)])
def test_a_contrast_counts_from_the_conflict_threshold(cosine: float, outcome: Outcome) -> None:
    old = existing("decision", "Use Redis for caching")
    assert run([cand("decision", "Use Memcached for caching")], [old], cosine).decisions[0].outcome is outcome


# ------------------------------------------------------------------ supersession

def test_a_change_that_names_the_old_item_supersedes_it_with_structured_evidence() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Use Memcached for caching instead of Redis", refs=("a1", "u2"))], [old], 0.80)
    decision = result.decisions[0]
    new_uid = compute_uid("decision", "Use Memcached for caching instead of Redis")
    assert (decision.outcome, decision.rule, decision.existing_uid) == (Outcome.SUPERSEDE, "named_replacement", old.uid)
    retired = next(item for item in result.writes if item.uid == old.uid)
    assert retired.status == "superseded" and retired.replaced_by == new_uid
    assert retired.supersession_evidence is not None
    assert {k: retired.supersession_evidence[k] for k in ("trigger", "ref_msg_id", "candidate_uid")} == \
        {"trigger": "instead", "ref_msg_id": "u2", "candidate_uid": new_uid}
    assert retired.supersession_evidence["named"] == ["redis"]
    replacement = next(item for item in result.writes if item.uid == new_uid)
    assert replacement.status == "active" and not replacement.conflict


def test_the_named_item_is_found_among_several_by_what_the_change_names() -> None:
    items = [existing("decision", "Use Postgres for analytics"), existing("decision", "Use Redis for caching"),
             existing("decision", "Use Kafka for events")]
    cosines = {("Drop Redis; cache in Memcached", t.text): c for t, c in zip(items, (0.5, 0.45, 0.5), strict=True)}
    result = run([cand("decision", "Drop Redis; cache in Memcached")], items, cosines)
    assert result.decisions[0].existing_uid == items[1].uid and result.decisions[0].outcome is Outcome.SUPERSEDE


def test_supersession_needs_a_ref_to_a_user_message() -> None:
    old = existing("decision", "Use Redis for caching")
    result = run([cand("decision", "Use Memcached for caching instead of Redis", refs=("a1",))], [old], 0.80)
    assert result.decisions[0].outcome is not Outcome.SUPERSEDE
    assert all(item.status != "superseded" for item in result.writes)


def test_a_named_supersession_needs_the_named_floor() -> None:
    old = existing("decision", "Use Redis for caching")
    assert run([cand("decision", "Use Memcached instead of Redis")], [old], 0.2999).decisions[0].outcome \
        is Outcome.INSERT


def test_change_language_with_a_contrast_supersedes_rather_than_conflicts() -> None:
    old = existing("constraint", "Uploads are limited to 25 MB")
    decision = run([cand("constraint", "The upload limit changed to 100 MB")], [old], 0.7).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.SUPERSEDE, "change_with_contrast")
    assert decision.evidence["contrast"]["kind"] == "number"


def test_an_explicit_supersedes_uid_is_honoured_when_the_change_check_passes() -> None:
    old = existing("decision", "Tag releases with calendar versions")
    other = existing("decision", "Tag releases in CI")
    text = "Release tags changed to semantic versioning"
    cosines = {(text, old.text): 0.35, (text, other.text): 0.55}
    decision = run([cand("decision", text, supersedes=old.uid)], [old, other], cosines).decisions[0]
    assert (decision.outcome, decision.rule, decision.existing_uid) == \
        (Outcome.SUPERSEDE, "explicit_supersedes", old.uid)


def test_an_explicit_supersedes_uid_without_change_language_is_not_trusted() -> None:
    old = existing("decision", "Tag releases with calendar versions")
    decision = run([cand("decision", "Tag releases with semantic versions", supersedes=old.uid)], [old], 0.5)
    assert decision.decisions[0].outcome is not Outcome.SUPERSEDE


def test_a_superseded_item_is_never_compared_nor_resurrected() -> None:
    gone = existing("decision", "Use Redis for caching", status="active")
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
    outcomes = [d.outcome for d in result.decisions]
    # The Redis item is retired by the first, so the second finds nothing live to merge with.
    assert outcomes == [Outcome.SUPERSEDE, Outcome.INSERT, Outcome.MERGE]
    assert result.metrics.as_dict() == {"extracted": 3, "inserted": 1, "merged": 1, "superseded": 1,
                                        "conflicted": 0, "dropped": 0}


def test_inputs_are_not_mutated() -> None:
    old = existing("decision", "Cache embeddings client-side")
    snapshot = dataclasses.replace(old)
    run([cand("decision", "Cache embeddings server-side")], [old], 0.94)
    assert old == snapshot


# ------------------------------------------------------------------ properties

TEXTS = ["Use Redis for caching", "Cache with Redis", "Use Memcached for caching instead of Redis",
         "Cache embeddings client-side", "Cache embeddings server-side", "Deploy on Friday",
         "Deploy on Monday instead of Friday", "Store timestamps in UTC", "No longer store timestamps in UTC"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(TEXTS), st.sampled_from(["u1", "a1"])), min_size=1, max_size=12),
       st.integers(0, 2**32))
def test_batches_never_resurrect_and_never_both_supersede_and_conflict(
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
            assert not by_uid[decision.candidate_uid].conflict or any(
                d.outcome is Outcome.CONFLICT and d.existing_uid == decision.candidate_uid for d in result.decisions)
    for uid, item in by_uid.items():
        if item.status == "superseded":
            later = [d for d in result.decisions if d.existing_uid == uid and d.outcome is Outcome.MERGE]
            superseded_at = next(i for i, d in enumerate(result.decisions)
                                 if d.outcome is Outcome.SUPERSEDE and d.existing_uid == uid)
            assert all(result.decisions.index(d) < superseded_at for d in later)
    counts = result.metrics
    assert counts.inserted + counts.merged + counts.superseded + counts.conflicted + counts.dropped == len(picks)


@given(st.floats(0.0, 1.0), st.floats(0.05, 0.95), st.floats(0.05, 0.95))
def test_a_plain_paraphrase_merges_exactly_when_its_score_reaches_the_merge_or_paraphrase_threshold(
        cosine: float, merge: float, paraphrase_floor: float) -> None:
    # The same words in another order: the paraphrase signal agrees, so the lower of the two bands decides.
    thresholds = dataclasses.replace(T, merge=merge, unnamed_supersede=merge, paraphrase_floor=paraphrase_floor)
    old = existing("risk", "No rate limiting on the token refresh endpoint")
    outcome = run([cand("risk", "The token refresh endpoint has no rate limit")], [old], cosine,
                  thresholds).decisions[0].outcome
    assert outcome is (Outcome.MERGE if cosine >= min(merge, paraphrase_floor) else Outcome.INSERT)


# ------------------------------------------------------------------ the seed's tree, kept as the baseline

@pytest.mark.parametrize("score, text, outcome", [
    (0.92, "Use Redis", Outcome.MERGE), (0.9199, "Use Redis", Outcome.CONFLICT),
    (0.85, "Switched: use Memcached instead of Redis", Outcome.SUPERSEDE),
    (0.85, "Memcached instead of Redis", Outcome.CONFLICT),  # no replacement verb
    (0.8499, "Use Memcached instead of Redis", Outcome.INSERT),
])
def test_the_seed_tree_as_written(score: float, text: str, outcome: Outcome) -> None:
    assert decide_as_seed(text, True, score, SEED_THRESHOLDS) is outcome


# ------------------------------------------------------------------ the signals themselves

@pytest.mark.parametrize("text, named", [
    ("Use Memcached for caching instead of Redis", ["redis"]),
    ("Switch deployment from ECS to Kubernetes on EKS", ["ecs"]),
    ("Write the ingest worker in Go rather than Python", ["python"]),
    ("Mongo was replaced by Postgres, so how should we partition?", ["mongo"]),
    ("Replace Jest with Vitest", ["jest"]),
    ("Search relevance drops for long queries", []),  # "drops" here is not a retirement
    ("Scrap the helicopter; the rescue team goes up on foot", ["the helicopter"]),
    ("Stop the amoxicillin and treat the infection with doxycycline", ["the amoxicillin"]),
    ("Repaint the backdrop grey; blue is dropped", ["blue"]),
    ("The overhaul is reassigned from the Hamburg hangar to Toulouse", ["the hamburg hangar"]),
    ("Move the suite off the Windows server onto the Linux runners", ["the windows server"]),
    ("Stop the server before the backup", []),  # one clause: an action, not a retirement
    ("Orders are cancelled after 3 days", []),  # a rule about cancelling, not a retirement
    ("Use Redis for caching", []),
])
def test_a_change_names_what_it_retires(text: str, named: list[str]) -> None:
    assert named_replacements(text) == named


@pytest.mark.parametrize("old_text, new_text", [
    ("Fix the flaky login test", "Fix the flaky checkout test"),
    ("Customer data may not leave the EU region", "Keep all customer data inside the EU"),
    ("Use Redis for caching", "Store timestamps in UTC"),
])
def test_no_contrast_between_different_objects_paraphrases_or_strangers(old_text: str, new_text: str) -> None:
    assert find_contrast(old_text, new_text, 0.5) is None


@pytest.mark.parametrize("old_text, new_text, kind", [
    ("Paginate the list endpoints with offsets", "Paginate the list endpoints with keyset cursors", "choice"),
    ("Run the backfill during office hours", "Run the backfill at the weekend", "choice"),
    ("Should we charge per user?", "Should we charge per gigabyte stored?", "choice"),
    ("Launch the workers in us-west-2", "Launch the workers in ap-south-1", "name"),
    ("Rotate the logs every three days", "Rotate the logs every day", "number"),
    ("The primary site is in the north region", "The primary site is in the south region", "antonym"),
])
def test_a_different_choice_in_the_same_frame_is_a_contrast(old_text: str, new_text: str, kind: str) -> None:
    contrast = find_contrast(old_text, new_text, 0.5)
    assert contrast is not None and contrast.kind == kind


@pytest.mark.parametrize("old_text, new_text", [
    ("Add an index on orders.status", "Add an index on users.email"),  # "on" names the object
    ("Write tests for the login page", "Write tests for the signup page"),  # "for" names the object
    ("Rotate the logs every day", "Rotate the logs every day at midnight"),  # added detail, nothing replaced
])
def test_a_different_object_or_an_added_detail_is_no_choice_contrast(old_text: str, new_text: str) -> None:
    contrast = find_contrast(old_text, new_text, 0.5)
    assert contrast is None or contrast.kind != "choice"


def test_a_changed_value_of_the_same_unit_supersedes_however_the_rest_is_worded() -> None:
    old = existing("constraint", "Uploads are capped at 20 files per request")
    text = "The per-request cap changed to 50 files"
    decision = run([cand("constraint", text)], [old], 0.41).decisions[0]
    assert (decision.outcome, decision.rule) == (Outcome.SUPERSEDE, "change_of_value")
    contrast = decision.evidence["contrast"]
    assert contrast["kind"] == "number" and contrast["old"].split()[0] == "20" and contrast["new"].split()[0] == "50"
    assert run([cand("constraint", text)], [old], 0.3999).decisions[0].outcome is Outcome.INSERT
    # Without change language a new value of a differently worded item is not trusted to replace it.
    assert run([cand("constraint", "A request carries at most 50 files")], [old], 0.5).decisions[0].outcome \
        is not Outcome.SUPERSEDE


@pytest.mark.parametrize("cosine, outcome", [(0.6, Outcome.SUPERSEDE), (0.5999, Outcome.INSERT)])
def test_unnamed_change_language_supersedes_from_its_threshold(cosine: float, outcome: Outcome) -> None:
    old = existing("action", "Deploy the service to the cluster by hand")
    decision = run([cand("action", "Deployment of the service is now automated")], [old], cosine).decisions[0]
    assert decision.outcome is outcome
    assert decision.rule == ("change_unnamed" if outcome is Outcome.SUPERSEDE else "no_match")


@pytest.mark.parametrize("cosine, outcome", [(0.30, Outcome.SUPERSEDE), (0.2999, Outcome.INSERT)])
def test_a_named_supersession_counts_from_the_named_floor(cosine: float, outcome: Outcome) -> None:
    old = existing("decision", "Use Redis for caching")
    assert run([cand("decision", "Use Memcached instead of Redis")], [old], cosine).decisions[0].outcome is outcome
