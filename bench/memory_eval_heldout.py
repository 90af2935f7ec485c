"""Turn a hand-written memory-search set into the JSON the evaluation reads.

bench/data/memory_eval_<set>.yaml is the source: long multi-session chats between two people,
each evidence turn naming the questions it helps answer. Two sets are written so: `heldout`, and
`fresh` (issue 43: written by a helper that read no other set, scored to check a change to HYBRID's
spreading that the held-out set may no longer guide). This script checks a set (unique ids, every
question has evidence, every `answers` id exists, every turn starts with one of the conversation's
speakers, sizes within range) and writes bench/data/memory_eval_<set>.json:

    {"part": "<set>", "conversations": [{"id", "speakers", "turns", "questions":
        [{"question", "kind", "evidence": [0-based turn indices]}]}]}

Both are HELD OUT: never read them to tune search; print only their recall tables.

Run from the repository root:

    .venv/bin/python bench/memory_eval_heldout.py [--set heldout|fresh]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

DATA_DIR = Path(__file__).resolve().parent / "data"
HAND_WRITTEN = ("heldout", "fresh")

KINDS = ("single", "multi", "temporal", "preference", "adversarial")
SESSIONS_PER_CONVERSATION = range(6, 11)
TURNS_PER_CONVERSATION = range(130, 181)
QUESTIONS_PER_CONVERSATION = range(40, 46)


class InvalidSet(ValueError):
    """The YAML breaks one of the set's rules; the message says where."""


@dataclass(frozen=True)
class Question:
    question: str
    kind: str
    evidence: list[int]


@dataclass(frozen=True)
class Conversation:
    id: str
    speakers: list[str]
    turns: list[str]
    questions: list[Question]


def _turn_text_and_answers(turn: Any, where: str) -> tuple[str, list[str]]:
    """A turn is a plain string, or {say, answers} for an evidence turn."""
    if isinstance(turn, str):
        return turn, []
    if isinstance(turn, dict) and set(turn) == {"say", "answers"}:
        answers = turn["answers"]
        if not isinstance(turn["say"], str) or not isinstance(answers, list) or not answers:
            raise InvalidSet(f"{where}: evidence turn needs a string `say` and a non-empty `answers`")
        return turn["say"], [str(a) for a in answers]
    raise InvalidSet(f"{where}: a turn is a string or {{say, answers}}, got {turn!r}")


def parse_conversation(raw: dict[str, Any]) -> Conversation:
    conv_id = str(raw["id"])
    speakers = [str(s) for s in raw["speakers"]]
    if len(speakers) != 2 or speakers[0] == speakers[1]:
        raise InvalidSet(f"{conv_id}: needs two different speakers")
    sessions = raw["sessions"]
    if len(sessions) not in SESSIONS_PER_CONVERSATION:
        raise InvalidSet(f"{conv_id}: {len(sessions)} sessions, want {SESSIONS_PER_CONVERSATION}")

    turns: list[str] = []
    evidence_by_id: dict[str, list[int]] = {}
    for s, session in enumerate(sessions):
        for t, turn in enumerate(session["turns"]):
            where = f"{conv_id} session {s} turn {t}"
            text, answers = _turn_text_and_answers(turn, where)
            if not any(text.startswith(f"{name}: ") for name in speakers):
                raise InvalidSet(f"{where}: does not start with one of {speakers} and ': ': {text!r}")
            for question_id in answers:
                evidence_by_id.setdefault(question_id, []).append(len(turns))
            turns.append(text)
    if len(turns) not in TURNS_PER_CONVERSATION:
        raise InvalidSet(f"{conv_id}: {len(turns)} turns, want {TURNS_PER_CONVERSATION}")

    questions: list[Question] = []
    seen: set[str] = set()
    for raw_q in raw["questions"]:
        question_id = str(raw_q["id"])
        if question_id in seen:
            raise InvalidSet(f"{conv_id}: question id {question_id} repeated")
        seen.add(question_id)
        if raw_q["kind"] not in KINDS:
            raise InvalidSet(f"{conv_id} {question_id}: kind {raw_q['kind']!r} not in {KINDS}")
        evidence = evidence_by_id.get(question_id, [])
        if not evidence:
            raise InvalidSet(f"{conv_id} {question_id}: no evidence turn answers it")
        questions.append(Question(str(raw_q["question"]), raw_q["kind"], sorted(set(evidence))))
    unknown = set(evidence_by_id) - seen
    if unknown:
        raise InvalidSet(f"{conv_id}: evidence answers unknown questions {sorted(unknown)}")
    if len(questions) not in QUESTIONS_PER_CONVERSATION:
        raise InvalidSet(f"{conv_id}: {len(questions)} questions, want {QUESTIONS_PER_CONVERSATION}")
    return Conversation(conv_id, speakers, turns, questions)


def load_heldout(source: Path = DATA_DIR / "memory_eval_heldout.yaml") -> list[Conversation]:
    document = yaml.safe_load(source.read_text(encoding="utf-8"))
    conversations = [parse_conversation(raw) for raw in document["conversations"]]
    ids = [c.id for c in conversations]
    if len(ids) != len(set(ids)):
        raise InvalidSet(f"conversation ids repeated: {ids}")
    return conversations


def to_json(conversations: list[Conversation], part: str = "heldout") -> str:
    document = {
        "part": part,
        "conversations": [
            {
                "id": c.id,
                "speakers": c.speakers,
                "turns": c.turns,
                "questions": [
                    {"question": q.question, "kind": q.kind, "evidence": q.evidence}
                    for q in c.questions
                ],
            }
            for c in conversations
        ],
    }
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", default="heldout", choices=HAND_WRITTEN)
    name = parser.parse_args().set
    output = DATA_DIR / f"memory_eval_{name}.json"
    try:
        conversations = load_heldout(DATA_DIR / f"memory_eval_{name}.yaml")
    except InvalidSet as problem:
        print(f"invalid {name} set: {problem}", file=sys.stderr)
        return 1
    output.write_text(to_json(conversations, name), encoding="utf-8")
    kinds: Counter[str] = Counter()
    for c in conversations:
        kinds.update(q.kind for q in c.questions)
        print(f"{c.id}: {len(c.turns)} turns, {len(c.questions)} questions")
    turns = sum(len(c.turns) for c in conversations)
    questions = sum(kinds.values())
    by_kind = ", ".join(f"{kind} {kinds[kind]}" for kind in KINDS)
    print(f"{len(conversations)} conversations, {turns} turns, {questions} questions ({by_kind})")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
