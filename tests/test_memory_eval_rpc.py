"""bench/memory_eval.py --rpc against a real server: a one-conversation set stored through AddMemoryEntries,
searched through SearchMemories, its hits mapped back to turns and scored as the in-process path scores."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import grpc

from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # bench/ is scripts, not a package

from memory_eval_rpc import search_and_score  # noqa: E402

TOY_SET: list[dict[str, Any]] = [{
    "id": "toy-1",
    "speakers": ["Maria", "Tom"],
    "turns": [
        "Maria: Morning! Did you water the tomatoes yesterday?",
        "Tom: I did, and the basil too.",
        "Maria: Big news: I'm relocating to Lisbon in March for the cartography job.",
        "Tom: Pack warm socks, winters get damp there.",
        "Maria: My bicycle chain snapped on the hill again.",
        "Tom: Take it to the shop near the bakery, they fix chains while you wait.",
        "Maria: The quarterly tax form is due on Friday.",
        "Tom: I filed mine last week, it took an hour.",
        "Maria: Our cat knocked the vase off the shelf.",
        "Tom: That vase was ugly anyway.",
        "Maria: Do you want to see the new documentary about octopuses?",
        "Tom: Yes, octopuses are clever; Saturday night works.",
    ],
    "questions": [
        # Both evidence turns hold the question's rarest word ("octopuses").
        {"question": "Which documentary about octopuses do they plan to watch?", "kind": "multi",
         "evidence": [10, 11]},
        # Turn 3 shares no word with the question: no full-text search can find it, so at most half.
        {"question": "Which city is Maria relocating to?", "kind": "multi", "evidence": [2, 3]},
    ],
}]


async def test_rpc_evaluation_scores_hits_mapped_back_to_their_turns(channel: grpc.aio.Channel) -> None:
    table = await search_and_score(TOY_SET, TaskServiceStub(channel), MemoryServiceStub(channel))

    for name in ("FULLTEXT", "BM25 (plain)"):  # both octopus turns, then the relocation turn but not turn 3
        assert table.recalls[name] == [[1.0, 0.5], [1.0, 0.5]], name
    for name in ("SEMANTIC", "HYBRID"):
        assert table.recalls[name][1][0] == 1.0, name  # the octopus turns within the first 10 of 12
    assert not table.no_hit
