"""What a model is asked about an open question, and how its reply is read (no I/O). How an answer applies
is the policy's (tests/unit/test_reconcile.py)."""

from __future__ import annotations

import json

import pytest

from taskmem.core.errors import ModelOutputInvalid
from taskmem.core.reconcile import BatchMessage, ReconcileThresholds, prepare_candidates, reconcile_candidates
from taskmem.core.state_items import Candidate, StateItem, validate_item
from taskmem.core.state_prompts import (
    ADJUDICATION_SYSTEM, AdjudicationAnswer, AdjudicationQuestion, adjudication_user_prompt, parse_adjudications,
)
from taskmem.providers.chat import ChatModel
from taskmem.state.adjudication import Adjudicator

OLD = "Fit a chrome towel rail in the bathroom."
NEW = "Fit a white towel rail in the bathroom."
WORDS = "Saw the price of the chrome towel rail, ouch. White's fine."


def item(text: str) -> StateItem:
    made = validate_item(Candidate("decision", text, confidence="medium", refs=("old",))).item
    assert made is not None
    return made


@pytest.mark.parametrize(("batch", "said_by", "message"), [
    ({"m1": BatchMessage(1, True, WORDS, "user")}, "user", WORDS),
    ({"m1": BatchMessage(1, False, "Price list 2027: white rails in stock", "document")}, "document",
     "Price list 2027: white rails in stock"),
    ({"m1": BatchMessage(1, False, "catalog lookup -> white", "tool")}, "tool", "catalog lookup -> white"),
])
def test_the_model_is_asked_with_what_the_policy_saw_both_texts_who_said_it_and_their_words(
        batch: dict[str, BatchMessage], said_by: str, message: str) -> None:
    old = item(OLD)
    prepared = prepare_candidates([Candidate("decision", NEW, refs=("m1",))], batch)
    decisions = reconcile_candidates(prepared, [old], lambda a, b: 0.95, ReconcileThresholds(ask=0.4)).decisions
    asked = Adjudicator(ChatModel("http://127.0.0.1:9", "m"), 1.0).questions(prepared, decisions, {old.uid: old})
    assert asked == [AdjudicationQuestion(0, "decision", old.uid, OLD, NEW, said_by, message)]
    sent = json.loads(adjudication_user_prompt(asked).removeprefix("Questions:\n"))
    assert sent == [{"id": 0, "type": "decision", "A": OLD, "B": NEW, "said_by": said_by, "message": message}]
    for word in ("replaces", "stands_beside", "same", "unsure", "said_by", "ONLY a JSON array"):
        assert word in ADJUDICATION_SYSTEM


ASKED = [AdjudicationQuestion(0, "decision", "d_old", OLD, NEW, "user", WORDS),
         AdjudicationQuestion(3, "risk", "r_x", "a", "b", "agent")]


def test_answers_are_read_by_id_fenced_or_in_prose_and_normalised() -> None:
    answer = 'Here:\n```json\n[{"id": "3", "answer": " Stands beside ", "reason": "' + "x" * 500 + \
             '"}, {"id": 0, "answer": "replaces"}]\n```'
    read = parse_adjudications(answer, ASKED)
    assert read[3] == AdjudicationAnswer(3, "stands_beside", "x" * 200)
    assert read[0] == AdjudicationAnswer(0, "replaces", "")


def test_entries_for_questions_not_asked_repeated_or_without_an_answer_are_left_out() -> None:
    answer = json.dumps([{"id": 7, "answer": "same"}, {"id": 0, "answer": "same"}, {"id": 0, "answer": "replaces"},
                         {"id": 3}, {"id": True, "answer": "same"}, "same"])
    assert parse_adjudications(answer, ASKED) == {0: AdjudicationAnswer(0, "same", "")}


def test_one_question_answered_in_a_bare_word_or_a_lone_object_is_read() -> None:
    one = ASKED[:1]
    assert parse_adjudications("replaces", one) == {0: AdjudicationAnswer(0, "replaces", "")}
    assert parse_adjudications('{"id": 0, "answer": "same"}', one)[0].answer == "same"


def test_an_answer_with_nothing_to_read_is_invalid_output() -> None:
    with pytest.raises(ModelOutputInvalid):
        parse_adjudications("I cannot tell.", ASKED)
