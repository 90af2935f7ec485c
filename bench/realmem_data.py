"""RealMem (../shared/data/realmem, Apache-2.0): its personas read into sessions, turns and questions with
their evidence, the dev/test split, the text each turn is stored as, and recall@k scoring.

The split was fixed before any figure was looked at: the four personas whose name has the lowest
sha256 are dev (tune on them), the other three test (scored once before the work and once after).
`split_of` recomputes it from the rule; DEV and TEST spell it out.

Evidence: a query turn (a user turn with is_query and a category) is followed by the assistant turn
whose `memory_session_uuids` are the evidence sessions and whose `memory_used` are the remembered facts;
a fact matches an `extracted_memory` entry of its session by content (objects compared as canonical
JSON), and that entry's `source_turn` (1-based, as its `source_content_snapshot` shows in ~90 % of
cases) names the evidence turn: the turn of source_turn - 2 .. source_turn whose text is most like the
snapshot. Questions whose facts match no extracted memory have session evidence only.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The data sit beside the checkout (../shared/data/realmem of the main one); REALMEM_DIR or --data overrides.
DATA_DIR = Path(os.environ.get("REALMEM_DIR") or next(
    (p / "shared" / "data" / "realmem" for p in Path(__file__).resolve().parents
     if (p / "shared" / "data" / "realmem").is_dir()), Path("shared/data/realmem")))
PERSONAS = ("Adeleke_Okonjo", "Ethan_Hunt", "Kenta_Tanaka", "Kim_Ji_young", "Liam_O_Connor", "Lin_Wanyu",
            "Oliver_Smith")
DEV = ("Adeleke_Okonjo", "Lin_Wanyu", "Ethan_Hunt", "Kenta_Tanaka")
TEST = ("Oliver_Smith", "Liam_O_Connor", "Kim_Ji_young")
SUMMARY_CHARACTERS = 300  # NewMemoryEntry.summary's limit
DETAIL_CHARACTERS = 65536  # NewMemoryEntry.detail's limit (a few generated turns are longer)
QUERY_CHARACTERS = 1000  # SearchMemoriesRequest.query's limit
KS = (5, 10)


def split_of(names: Iterable[str], dev_count: int = 4) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(dev, test): the dev_count names with the lowest sha256 of the name are dev."""
    ranked = sorted(names, key=lambda name: hashlib.sha256(name.encode()).hexdigest())
    return tuple(ranked[:dev_count]), tuple(ranked[dev_count:])


@dataclass(frozen=True)
class Turn:
    speaker: str
    content: str


@dataclass(frozen=True)
class Session:
    uuid: str
    date: str  # "2025-12-19 (Friday)"
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    session: int  # index of the session it is asked in: search the sessions before it
    turn: int
    text: str
    category: str
    evidence_sessions: frozenset[int]
    evidence_turns: frozenset[tuple[int, int]]  # (session index, turn index); may be empty


@dataclass(frozen=True)
class Persona:
    name: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...] = field(default=())


def entry_text(session: Session, turn: Turn) -> tuple[str, str]:
    """(summary, detail) of a turn stored as a user would: the session's date and the speaker before the
    words, the summary cut to its 300 characters at a word, the whole turn (up to 64 KiB) as detail when it is longer."""
    head = f"{session.date} {turn.speaker}: "
    text = " ".join(turn.content.split())
    summary = head + text
    if len(summary) <= SUMMARY_CHARACTERS:
        return summary, ""
    cut = summary[:SUMMARY_CHARACTERS - 1]
    cut = cut[:cut.rfind(" ")] if " " in cut[len(head):] else cut
    return cut + "…", turn.content[:DETAIL_CHARACTERS]


def query_text(question: Question) -> str:
    return " ".join(question.text.split())[:QUERY_CHARACTERS]


def _canonical(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, sort_keys=True, ensure_ascii=False)


def _source_turn(turns: Sequence[dict[str, Any]], memory: dict[str, Any]) -> int | None:
    given = memory.get("source_turn")
    if not isinstance(given, int):
        return None
    snapshot = str(memory.get("source_content_snapshot") or "")[:300]
    near = [i for i in (given - 1, given - 2, given) if 0 <= i < len(turns)]
    if not near:
        return None
    return max(near, key=lambda i: (difflib.SequenceMatcher(None, snapshot, turns[i]["content"][:300]).ratio(),
                                    i == given - 1))


def parse_persona(name: str, raw: dict[str, Any]) -> Persona:
    dialogues = raw["dialogues"]
    index_of = {d["session_uuid"]: i for i, d in enumerate(dialogues)}
    facts: dict[tuple[int, str], int] = {}  # (session, canonical content) -> turn
    for s, dialogue in enumerate(dialogues):
        for memory in dialogue.get("extracted_memory") or []:
            turn = _source_turn(dialogue["dialogue_turns"], memory)
            if turn is not None:
                facts.setdefault((s, _canonical(memory["content"])), turn)
    sessions, questions = [], []
    for s, dialogue in enumerate(dialogues):
        turns = dialogue["dialogue_turns"]
        sessions.append(Session(dialogue["session_uuid"], dialogue["current_time"],
                                tuple(Turn(t["speaker"], t["content"]) for t in turns)))
        for t, turn in enumerate(turns):
            if not (turn.get("is_query") and turn.get("category_name")) or t + 1 >= len(turns):
                continue
            answer = turns[t + 1]
            evidence = frozenset(index_of[u] for u in answer.get("memory_session_uuids") or [] if u in index_of)
            used = [(index_of.get(m["session_uuid"]), _canonical(m["content"])) for m in answer.get("memory_used") or []]
            evidence_turns = frozenset((u, facts[(u, c)]) for u, c in used if u is not None and (u, c) in facts)
            if evidence:
                questions.append(Question(s, t, turn["content"], turn["category_name"], evidence, evidence_turns))
    return Persona(name, tuple(sessions), tuple(questions))


def load_persona(name: str, data_dir: Path = DATA_DIR) -> Persona:
    raw = json.loads((data_dir / f"{name}_dialogues_256k.json").read_text(encoding="utf-8"))
    return parse_persona(name, raw)


def recall(found: Sequence[Any], evidence: Iterable[Any], k: int) -> float:
    """The share of the evidence among the first k found (found may repeat: a session of several hits)."""
    wanted = set(evidence)
    return len(set(found[:k]) & wanted) / len(wanted)


class RecallTable:
    """recall@5/@10 of evidence sessions and turns per (row, category), averaged over questions."""

    def __init__(self) -> None:
        self.scores: dict[tuple[str, str], list[tuple[float, ...]]] = {}
        self.turn_scores: dict[tuple[str, str], list[tuple[float, ...]]] = {}

    @classmethod
    def merged(cls, tables: Iterable[RecallTable]) -> RecallTable:
        """One table of every question of the tables."""
        merged = cls()
        for table in tables:
            for mine, theirs in ((merged.scores, table.scores), (merged.turn_scores, table.turn_scores)):
                for key, values in theirs.items():
                    mine.setdefault(key, []).extend(values)
        return merged

    def add(self, row: str, question: Question, hits: Sequence[tuple[int, int]]) -> None:
        """hits: (session, turn) of each hit, best first."""
        for category in ("all", question.category):
            sessions = [s for s, _ in hits]
            self.scores.setdefault((row, category), []).append(
                tuple(recall(sessions, question.evidence_sessions, k) for k in KS))
            if question.evidence_turns:
                self.turn_scores.setdefault((row, category), []).append(
                    tuple(recall(hits, question.evidence_turns, k) for k in KS))

    def mean(self, row: str, category: str = "all", k: int = 10, turns: bool = False) -> float:
        values = (self.turn_scores if turns else self.scores).get((row, category), [])
        return sum(v[KS.index(k)] for v in values) / len(values) if values else float("nan")

    def count(self, row: str, category: str = "all", turns: bool = False) -> int:
        return len((self.turn_scores if turns else self.scores).get((row, category), []))

    def lines(self) -> list[str]:
        rows = list(dict.fromkeys(r for r, _ in self.scores))
        categories = ["all", *sorted({c for _, c in self.scores} - {"all"})]
        out = [f"{'mode':<14} {'category':<22} {'n':>4} {'sess@5':>7} {'sess@10':>8} {'n turn':>6} {'turn@5':>7}"
               f" {'turn@10':>8}"]
        for category in categories:
            for row in rows:
                if not self.count(row, category):
                    continue
                out.append(f"{row:<14} {category:<22} {self.count(row, category):4d}"
                           f" {self.mean(row, category, 5):7.3f} {self.mean(row, category, 10):8.3f}"
                           f" {self.count(row, category, True):6d} {self.mean(row, category, 5, True):7.3f}"
                           f" {self.mean(row, category, 10, True):8.3f}")
        return out
