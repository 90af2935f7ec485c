"""A judge's answers applied through reconcile_candidates, and the prompt that asks for them (no I/O).
Which decisions are uncertain is the policy's to say (tests/unit/test_reconcile.py)."""

from __future__ import annotations

import json

import pytest

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.reconcile import (
    Adjudication,
    BatchMessage,
    Outcome,
    ReconcileResult,
    ReconcileThresholds,
    prepare_candidates,
    reconcile_candidates,
)
from taskmem.core.state_items import SUPERSEDED, Candidate, StateItem, validate_item
from taskmem.core.state_prompts import (
    ADJUDICATION_SYSTEM, AdjudicationAnswer, AdjudicationQuestion, adjudication_user_prompt, parse_adjudications,
)

T = ReconcileThresholds(merge=0.66, conflict=0.4, alignment=0.5, named_floor=0.3)
BATCH = {"u1": BatchMessage(100, from_user=True), "a1": BatchMessage(150, from_user=False)}
OLD = "Store session data in Redis"
NEW = "Keep the session cache in Redis"


def item(kind: str, text: str) -> StateItem:
    made = validate_item(Candidate(kind, text, confidence="medium", refs=("old",))).item
    assert made is not None
    return made


def run(candidates: list[Candidate], items: list[StateItem], cosine: float,
        overrides: dict[int, Adjudication] | None = None) -> ReconcileResult:
    return reconcile_candidates(prepare_candidates(candidates, BATCH), items, lambda a, b: cosine, T,
                                overrides=overrides)


def cand(text: str, kind: str = "decision", refs: tuple[str, ...] = ("u1",)) -> Candidate:
    return Candidate(kind, text, confidence="high", refs=refs)


# ------------------------------------------------------------------ overrides

def answer(outcome: str, target: str | None, reason: str = "") -> Adjudication:
    return Adjudication(outcome, target, "judge-1", reason, "merge on similarity alone")


def test_no_overrides_gives_the_builtin_result() -> None:
    old = item("decision", OLD)
    assert run([cand(NEW)], [old], 0.70, {}) == run([cand(NEW)], [old], 0.70)


def test_a_conflict_answer_flags_both_items_and_records_the_builtin_merge_and_the_model() -> None:
    old = item("decision", OLD)
    result = run([cand(NEW)], [old], 0.70, {0: answer("conflict", old.uid, "a cache is not the store")})
    made = result.decisions[-1]
    assert (made.outcome, made.existing_uid, made.rule) == (Outcome.CONFLICT, old.uid, "adjudicated")
    record = made.evidence["adjudication"]
    assert record["builtin"]["outcome"] == "merge" and record["builtin"]["rule"] == "duplicate"
    assert (record["model"], record["answer"], record["reason"], record["applied"]) == (
        "judge-1", "conflict", "a cache is not the store", True)
    assert "judge-1 answered conflict (builtin merge, duplicate): a cache is not the store" == made.detail
    written = {w.uid: w for w in result.writes}
    assert written[old.uid].conflict and written[made.candidate_uid].conflict
    assert [d.outcome for d in result.decisions] == [Outcome.CONFLICT]


def test_a_supersede_answer_retires_the_old_item_with_evidence_naming_the_model() -> None:
    old = item("decision", OLD)
    result = run([cand(NEW)], [old], 0.50, {0: answer("supersede", old.uid)})
    made = result.decisions[-1]
    assert made.outcome is Outcome.SUPERSEDE and made.existing_uid == old.uid
    retired = next(w for w in result.writes if w.uid == old.uid)
    assert retired.status == SUPERSEDED and retired.replaced_by == made.candidate_uid
    evidence = retired.supersession_evidence
    assert evidence["matched_by"] == "adjudicated by judge-1" and evidence["ref_msg_id"] == "u1"
    assert evidence["adjudication"]["builtin"]["outcome"] == "insert"


def test_an_insert_answer_keeps_the_candidate_apart_and_a_merge_answer_folds_it_in() -> None:
    old = item("decision", OLD)
    apart = run([cand(NEW)], [old], 0.70, {0: answer("insert", None)})
    assert apart.decisions[-1].outcome is Outcome.INSERT and apart.inserted == [apart.decisions[-1].candidate_uid]
    folded = run([cand(NEW)], [old], 0.50, {0: answer("merge", old.uid)})
    assert folded.decisions[-1].outcome is Outcome.MERGE and folded.inserted == []


def test_an_answer_that_agrees_keeps_the_rule_and_says_the_model_agreed() -> None:
    old = item("decision", OLD)
    made = run([cand(NEW)], [old], 0.70, {0: answer("merge", old.uid)}).decisions[-1]
    assert (made.outcome, made.rule) == (Outcome.MERGE, "duplicate")
    assert made.evidence["adjudication"]["agreed"] is True


def test_answers_that_cannot_apply_keep_the_builtin_decision_and_say_why() -> None:
    old, other_type = item("decision", OLD), item("constraint", "Sessions stay in Redis")
    builtin = run([cand(NEW)], [old, other_type], 0.70).decisions[-1]
    cases = {"unknown outcome": answer("maybe", old.uid), "unknown target": answer("conflict", "d_nothing"),
             "another type": answer("conflict", other_type.uid), "no target": answer("merge", None),
             "dropped": answer("drop", None),
             "no answer": Adjudication("", None, "judge-1", error="the model did not answer within 1 s")}
    for name, bad in cases.items():
        kept = run([cand(NEW)], [old, other_type], 0.70, {0: bad}).decisions[-1]
        assert (kept.outcome, kept.existing_uid, kept.rule) == (builtin.outcome, builtin.existing_uid, builtin.rule)
        assert kept.evidence["adjudication"]["applied"] is False and kept.evidence["adjudication"]["kept"], name


def test_a_supersede_answer_without_a_user_message_behind_the_candidate_is_not_applied() -> None:
    old = item("decision", OLD)
    kept = run([cand(NEW, refs=("a1",))], [old], 0.70, {0: answer("supersede", old.uid)}).decisions[-1]
    assert kept.outcome is Outcome.MERGE and "user message" in kept.evidence["adjudication"]["kept"]


def test_an_override_applies_to_its_candidate_index_and_later_candidates_see_its_effect() -> None:
    old = item("decision", OLD)
    twin = "Keep the session cache in Redis cluster"
    # Builtin: both merge into the old item. With the first kept apart, the second meets it too.
    plain = run([cand(NEW), cand(twin)], [old], 0.70)
    assert [d.outcome for d in plain.decisions] == [Outcome.MERGE, Outcome.MERGE]
    split = run([cand(NEW), cand(twin)], [old], 0.70, {0: answer("insert", None)})
    assert split.decisions[0].outcome is Outcome.INSERT and split.decisions[1].outcome is Outcome.MERGE
    assert "adjudication" not in split.decisions[1].evidence


# ------------------------------------------------------------------ the prompt and reading the answer

ASKED = [AdjudicationQuestion(0, "decision", NEW, "d_old", OLD), AdjudicationQuestion(3, "risk", "b", "r_x", "a")]


def test_the_questions_go_out_as_one_json_array_with_the_existing_items_uid() -> None:
    prompt = adjudication_user_prompt(ASKED)
    assert prompt.startswith("Questions:\n")
    assert json.loads(prompt.removeprefix("Questions:\n"))[0] == {
        "id": 0, "type": "decision", "candidate": NEW, "existing": {"uid": "d_old", "text": OLD}}
    for word in ("merge", "supersede", "conflict", "insert", "ONLY a JSON array"):
        assert word in ADJUDICATION_SYSTEM


def test_answers_are_read_by_id_fenced_or_in_prose_and_normalised() -> None:
    answer = 'Here:\n```json\n[{"id": "3", "outcome": " Conflict ", "target": "r_x", "reason": "' + "x" * 500 + \
             '"}, {"id": 0, "outcome": "insert", "target": null}]\n```'
    read = parse_adjudications(answer, ASKED)
    assert read[3] == AdjudicationAnswer(3, "conflict", "r_x", "x" * 200)
    assert read[0] == AdjudicationAnswer(0, "insert", None, "")


def test_entries_for_questions_not_asked_repeated_or_without_an_outcome_are_left_out() -> None:
    answer = json.dumps([{"id": 7, "outcome": "merge"}, {"id": 0, "outcome": "merge", "target": "d_old"},
                         {"id": 0, "outcome": "insert"}, {"id": 3}, {"id": True, "outcome": "merge"}, "merge"])
    assert parse_adjudications(answer, ASKED) == {0: AdjudicationAnswer(0, "merge", "d_old", "")}


def test_an_answer_with_no_json_array_is_invalid_output() -> None:
    with pytest.raises(ModelOutputInvalid):
        parse_adjudications("I would merge them.", ASKED)
