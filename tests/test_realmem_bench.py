"""bench/realmem.py against a real server on a slice of RealMem (tests/data/realmem: the first 13 sessions of
one persona): evidence read from the data, one entry per turn stored through AddMemoryEntries, each
question searched as of the end of the session before it, hits mapped back to sessions and turns."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import grpc

from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # bench/ is scripts, not a package

from realmem import MODE_NAMES, search_and_score, store_persona  # noqa: E402
from realmem_data import (  # noqa: E402
    DEV, PERSONAS, TEST, RecallTable, entry_text, parse_persona, recall, split_of,
)

SLICE = Path(__file__).resolve().parent / "data" / "realmem" / "Lin_Wanyu_first_13_sessions.json"


def slice_persona():
    return parse_persona("Lin_Wanyu", json.loads(SLICE.read_text(encoding="utf-8")))


def test_the_split_is_the_hash_rule_and_every_persona_is_in_exactly_one_part() -> None:
    assert split_of(PERSONAS) == (DEV, TEST)
    assert sorted(DEV + TEST) == sorted(PERSONAS) and not set(DEV) & set(TEST)


def test_questions_carry_their_evidence_sessions_and_the_turns_their_facts_came_from() -> None:
    persona = slice_persona()
    assert [(q.session, q.turn) for q in persona.questions] == [(7, 2), (10, 0), (12, 0), (12, 6), (12, 8)]
    travel = persona.questions[1]
    assert travel.text.startswith("Hi! I've decided on the Classic Loop itinerary")
    assert travel.evidence_sessions == {8} and travel.evidence_turns == {(8, 0)}
    assert persona.questions[2].evidence_sessions == {3, 7}
    assert all(s < q.session for q in persona.questions for s in q.evidence_sessions)


def test_an_entry_is_the_turn_with_its_date_and_speaker_its_summary_within_300_characters() -> None:
    session = slice_persona().sessions[5]
    summary, detail = entry_text(session, session.turns[3])
    assert summary.startswith("2025-12-18 (Thursday) Assistant: Excellent!") and len(summary) <= 300
    assert detail == session.turns[3].content
    assert entry_text(session, session.turns[0])[1] == ""  # a short turn is all summary


def test_recall_counts_each_evidence_session_once_however_many_hits_it_has() -> None:
    assert recall([3, 3, 3, 7], {3, 7}, 2) == 0.5
    assert recall([3, 3, 3, 7], {3, 7}, 4) == 1.0


async def test_questions_find_only_what_was_said_before_their_session_and_score_per_category(
        channel: grpc.aio.Channel) -> None:
    persona = slice_persona()
    stored = await store_persona(persona, TaskServiceStub(channel), MemoryServiceStub(channel))
    assert len(stored.turn_of) == sum(len(s.turns) for s in persona.sessions)
    seen: list[tuple[int, list[tuple[int, int]]]] = []

    class Recording(RecallTable):
        def add(self, row, question, hits):  # type: ignore[no-untyped-def]
            seen.append((question.session, list(hits)))
            super().add(row, question, hits)

    table = Recording()
    await search_and_score(stored, MemoryServiceStub(channel), table)

    assert len(seen) == len(persona.questions) * len(MODE_NAMES)
    assert all(hits and all(s < session for s, _ in hits) for session, hits in seen)  # as of the session before
    for mode in MODE_NAMES:
        assert table.count(mode) == 5 and table.count(mode, "Dynamic Incremental") == 4
        # The Classic Loop question shares its rare words with the one session that planned the trip.
        assert table.scores[(mode, "all")][1] == (1.0, 1.0), mode
