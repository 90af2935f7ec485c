"""core.memory_recency: the opt-in re-ranking of search hits by recency and importance beside relevance."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from taskmem.core.memory import MemoryEntry, MemoryType
from taskmem.core.memory_recency import DAY_US, RecencyWeights, recency, rerank_pool, rerank_by_recency
from taskmem.core.memory_search import Hit

NOW = 1_000 * DAY_US


def entry(seq: int, age_days: float, kind: MemoryType = MemoryType.CONTEXT) -> MemoryEntry:
    return MemoryEntry("default", f"mem_{seq}", seq, "t", "", kind, f"entry {seq}", "", (), (), "api",
                       NOW - int(age_days * DAY_US))


def test_recency_halves_every_half_life_and_counts_a_future_entry_as_new() -> None:
    assert recency(0, DAY_US) == 1.0
    assert recency(DAY_US, DAY_US) == 0.5
    assert recency(3 * DAY_US, DAY_US) == 0.125
    assert recency(-DAY_US, DAY_US) == 1.0


def test_zero_weights_keep_the_search_order_and_relevance_share_as_score() -> None:
    hits = [(Hit(1, 8.0), entry(1, 30)), (Hit(2, 4.0), entry(2, 0))]
    ranked = rerank_by_recency(hits, RecencyWeights(0.0, 0.0), NOW, 10)
    assert [(hit.seq, hit.score) for hit, _ in ranked] == [(1, 1.0), (2, 0.5)]


def test_recency_weight_lifts_a_newer_entry_over_a_better_older_match() -> None:
    hits = [(Hit(1, 1.0), entry(1, 30)), (Hit(2, 0.8), entry(2, 0))]
    assert [hit.seq for hit, _ in rerank_by_recency(hits, RecencyWeights(0.3, 0.0, 7 * DAY_US), NOW, 10)] == [2, 1]


def test_importance_weight_ranks_a_users_instruction_over_equally_relevant_context() -> None:
    hits = [(Hit(1, 1.0), entry(1, 0)), (Hit(2, 1.0), entry(2, 0, MemoryType.USER_INSTRUCTION))]
    assert [hit.seq for hit, _ in rerank_by_recency(hits, RecencyWeights(0.0, 0.2), NOW, 10)] == [2, 1]


def test_reranking_cuts_to_the_limit_from_a_deeper_candidate_pool() -> None:
    assert rerank_pool(10) == 30 and rerank_pool(1) == 30 and rerank_pool(50) == 150
    hits = [(Hit(seq, 1.0 - seq / 100), entry(seq, seq)) for seq in range(30)]
    assert len(rerank_by_recency(hits, RecencyWeights(0.5, 0.0), NOW, 10)) == 10


@given(st.lists(st.tuples(st.floats(0, 50), st.floats(0, 400)), min_size=1, max_size=30),
       st.floats(0, 1), st.floats(0, 1))
def test_reranked_scores_stay_between_0_and_1_and_come_best_first(
        rows: list[tuple[float, float]], w_recency: float, w_importance: float) -> None:
    scale = w_recency + w_importance
    if scale > 1:
        w_recency, w_importance = w_recency / scale, w_importance / scale
    hits = [(Hit(seq, score), entry(seq, age)) for seq, (score, age) in enumerate(rows)]
    ranked = rerank_by_recency(hits, RecencyWeights(w_recency, w_importance), NOW, 100)
    scores = [hit.score for hit, _ in ranked]
    assert sorted(scores, reverse=True) == scores
    assert all(-1e-9 <= s <= 1 + 1e-9 for s in scores)
    assert len(ranked) == len(rows)
