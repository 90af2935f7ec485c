"""Search results: reciprocal-rank fusion of the full-text and semantic lists, and the FTS5 query of a text."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Sequence

RRF_K = 60  # the constant of Cormack et al.: damps the weight of the very top ranks
# HYBRID fuses each mode's best CANDIDATES_PER_HIT × limit entries (at least MIN_CANDIDATES): deeper
# ranks add at most 1/(RRF_K + 21) each, too little to lift an entry into the top `limit`.
CANDIDATES_PER_HIT = 2
MIN_CANDIDATES = 20


class SearchMode(enum.StrEnum):
    FULLTEXT = "SEARCH_MODE_FULLTEXT"
    SEMANTIC = "SEARCH_MODE_SEMANTIC"
    HYBRID = "SEARCH_MODE_HYBRID"


@dataclasses.dataclass
class Hit:
    """One entry (by seq) found by one or both modes; ranks are 1-based, 0 = not found by that mode."""

    seq: int
    score: float
    fulltext_rank: int = 0
    semantic_rank: int = 0
    snippet: str = ""

    @property
    def found_by(self) -> tuple[SearchMode, ...]:
        return tuple(mode for mode, rank in ((SearchMode.FULLTEXT, self.fulltext_rank),
                                             (SearchMode.SEMANTIC, self.semantic_rank)) if rank)


def candidate_count(limit: int) -> int:
    """How many entries each mode contributes to a HYBRID search for `limit` hits."""
    return max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES)


def reciprocal_rank_fusion(fulltext: Sequence[tuple[int, str]], semantic: Sequence[int], limit: int,
                           k: int = RRF_K) -> list[Hit]:
    """Merge two ranked lists of seqs: score = Σ 1 / (k + rank) over the lists an entry is in.

    fulltext holds (seq, snippet) best first; semantic holds seqs best first. Ties keep the
    entry ranked higher in either list first, then the lower seq (deterministic).
    """
    hits: dict[int, Hit] = {}
    for rank, (seq, snippet) in enumerate(fulltext, start=1):
        hits[seq] = Hit(seq, 1.0 / (k + rank), fulltext_rank=rank, snippet=snippet)
    for rank, seq in enumerate(semantic, start=1):
        hit = hits.setdefault(seq, Hit(seq, 0.0))
        hit.semantic_rank = rank
        hit.score += 1.0 / (k + rank)
    best_rank = {seq: min(r for r in (h.fulltext_rank, h.semantic_rank) if r) for seq, h in hits.items()}
    return sorted(hits.values(), key=lambda h: (-h.score, best_rank[h.seq], h.seq))[:limit]


_WORD = re.compile(r"\w+", re.UNICODE)


def fts_query(text: str) -> str:
    """An FTS5 MATCH expression that needs every word of text, each quoted (so no FTS5 syntax leaks in)."""
    return " ".join(f'"{word}"' for word in _WORD.findall(text))
