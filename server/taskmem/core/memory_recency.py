"""Recency and importance beside relevance: SearchMemories' opt-in re-ranking of a search's hits.

A step after the search's own ranking (full text, semantic, or their fusion in core/memory_search.py),
which it does not change: the search is run for more candidates than asked (rerank_pool), then each
candidate's score becomes

    score = (1 - recency_weight - importance_weight) × relevance
            + recency_weight × 0.5 ^ (age / half_life)
            + importance_weight × importance of the entry's type

relevance being the search's score over the best candidate's (0..1, so FULLTEXT's unbounded BM25 and
HYBRID's fused score weigh alike), age the time since the entry was written, and importance a fixed
prior per memory type (IMPORTANCE: what the user said and what was decided outweighs tool output and
conversation context). Entries carry no importance of their own.

Off unless asked (a request without weights): on bench/memory_eval.py, where every question asks about
any moment of a long conversation, small recency weights moved recall by at most 0.01 either way on the
held-out set and weights of 0.1 or more lost it (docs/benchmarks.md has the figures), so relevance alone
stays the default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TypeVar

from taskmem.core.memory import MemoryEntry, MemoryType
from taskmem.core.memory_search import Hit

DAY_US = 24 * 3600 * 1_000_000
DEFAULT_HALF_LIFE_US = 7 * DAY_US
# The search is run for this many times the hits asked for (at least MIN_POOL), so a recent or
# important entry just below the cut can rise into it.
POOL_PER_HIT = 3
MIN_POOL = 30

IMPORTANCE: dict[MemoryType, float] = {
    MemoryType.USER_INSTRUCTION: 1.0,
    MemoryType.DECISION: 0.9,
    MemoryType.ERROR: 0.8,
    MemoryType.DISCOVERY: 0.7,
    MemoryType.ARTIFACT: 0.5,
    MemoryType.TOOL_RESULT: 0.3,
    MemoryType.CONTEXT: 0.2,
}

E = TypeVar("E", bound=MemoryEntry)


@dataclasses.dataclass(frozen=True)
class RecencyWeights:
    """How much recency and importance count beside relevance (each 0..1, together at most 1)."""

    recency: float
    importance: float
    half_life_us: int = DEFAULT_HALF_LIFE_US

    @property
    def relevance(self) -> float:
        return 1.0 - self.recency - self.importance


def rerank_pool(limit: int) -> int:
    """How many hits the search is asked for before re-ranking `limit` of them."""
    return max(limit * POOL_PER_HIT, MIN_POOL)


def recency(age_us: int, half_life_us: int) -> float:
    """1 for an entry written now, 0.5 one half-life ago; an entry from the future (clock skew) counts as now."""
    return 0.5 ** (max(age_us, 0) / half_life_us)


def rerank_by_recency(hits: Sequence[tuple[Hit, E]], weights: RecencyWeights, now_us: int,
                      limit: int) -> list[tuple[Hit, E]]:
    """The best `limit` hits by the weighted score (module docstring), each hit's score replaced by it.
    Ties keep the search's order."""
    if not hits:
        return []
    best = max(hit.score for hit, _ in hits)
    scored = []
    for position, (hit, entry) in enumerate(hits):
        # A share by division, not by a reciprocal: 1 / a subnormal best score overflows to infinity.
        share = hit.score / best if best > 0 else 0.0
        score = (weights.relevance * share
                 + weights.recency * recency(now_us - entry.created_at, weights.half_life_us)
                 + weights.importance * IMPORTANCE[entry.type])
        scored.append((-score, position, dataclasses.replace(hit, score=score), entry))
    scored.sort(key=lambda row: (row[0], row[1]))
    return [(hit, entry) for _, _, hit, entry in scored[:limit]]
