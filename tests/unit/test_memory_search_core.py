"""Convex fusion and the FTS5 query of a text, without a database."""

from __future__ import annotations

import pytest

from taskmem.core.memory_search import (
    FULLTEXT_WEIGHT, MIN_CANDIDATES, SHARE_PULL, WEIGHT_BOUNDS, SearchMode, candidate_count, convex_fusion, fts_query,
    fusion_weights,
)


def test_convex_fusion_adds_the_weighted_share_and_similarity_with_a_known_similarity_for_text_only_hits() -> None:
    hits = convex_fusion([(10, 0.9), (20, 0.5), (30, 0.2)], [(30, 0.8), (40, 0.7)], {10: 0.1}, limit=10,
                         weights=(0.4, 0.6))
    scores = {hit.seq: hit.score for hit in hits}
    text, near = 0.4, 0.6
    assert scores == pytest.approx({10: text * 0.9 + near * 0.1, 20: text * 0.5,  # 20: not embedded yet
                                    30: text * 0.2 + near * 0.8, 40: near * 0.7})
    assert [hit.seq for hit in hits] == [30, 10, 40, 20]
    assert [(h.fulltext_rank, h.semantic_rank) for h in hits] == [(3, 1), (1, 0), (0, 2), (2, 0)]
    assert hits[1].found_by == (SearchMode.FULLTEXT,)  # its similarity was looked up, not found by the semantic list


def test_convex_fusion_weighs_each_query_by_its_fusion_weights_unless_given_weights() -> None:
    fulltext, semantic = [(10, 0.9), (20, 0.5)], [(30, 0.8), (40, 0.7)]
    text, near = fusion_weights(fulltext, semantic)
    scores = {hit.seq: hit.score for hit in convex_fusion(fulltext, semantic, {}, limit=10)}
    assert scores == pytest.approx({10: text * 0.9, 20: text * 0.5, 30: near * 0.8, 40: near * 0.7})


def test_convex_fusion_breaks_ties_by_the_better_single_rank_then_the_lower_seq() -> None:
    hits = convex_fusion([(9, 0.5), (8, 0.25)], [(7, 0.5), (5, 0.25)], {}, limit=4, weights=(0.5, 0.5))
    assert [hit.seq for hit in hits] == [7, 9, 5, 8]
    assert convex_fusion([], [], {}, limit=3) == []


def test_the_full_text_weight_grows_with_the_best_share_the_query_words_reach() -> None:
    flat = [(seq, 0.6) for seq in range(10)]
    weights = [fusion_weights([(99, share)], flat)[0] for share in (0.0, 0.3, 0.6, 0.9)]
    assert weights == sorted(weights) and weights[0] == pytest.approx(FULLTEXT_WEIGHT) and weights[-1] > 0.7


def test_the_full_text_weight_shrinks_as_the_nearest_entry_leads_the_next_ones() -> None:
    weights = [fusion_weights([(99, 0.4)], [(0, 0.6 + lead), *((seq, 0.6) for seq in range(1, 10))])[0]
               for lead in (0.0, 0.02, 0.05, 0.1)]
    assert weights == sorted(weights, reverse=True) and weights[-1] == pytest.approx(WEIGHT_BOUNDS[0])


def test_fusion_weights_stay_within_their_bounds_and_add_up_to_one() -> None:
    for fulltext, semantic in (([], []), ([(1, 1.0)], []), ([], [(1, 0.9), (2, -0.5)]), ([(1, 1.0)], [(1, 0.1)])):
        text, near = fusion_weights(fulltext, semantic)
        assert WEIGHT_BOUNDS[0] <= text <= WEIGHT_BOUNDS[1] and text + near == pytest.approx(1.0)


def test_a_small_namespaces_unrelated_tail_is_no_dense_lead() -> None:
    # Four near-equal neighbours and one far entry: the nearest does not stand out, so full text keeps its weight.
    assert fusion_weights([(9, 0.5)], [(1, 0.9), (2, 0.9), (3, 0.9), (4, 0.89), (9, 0.1)])[0] == pytest.approx(
        FULLTEXT_WEIGHT + SHARE_PULL * 0.5)


def test_hybrid_puts_a_strong_full_text_match_first_when_the_vectors_do_not_tell_the_entries_apart() -> None:
    # Every neighbour is as near as the next (no dense lead) and one entry holds the query's words: the fixed
    # 0.4/0.6 weights ranked it below four entries it shares no word with (0.4 × 0.9 + 0.6 × 0.1 < 0.6 × 0.8).
    hits = convex_fusion([(9, 0.9)], [(1, 0.8), (2, 0.8), (3, 0.8), (4, 0.8), (9, 0.1)], {}, limit=5)
    assert hits[0].seq == 9


def test_each_mode_contributes_at_least_min_candidates_to_a_hybrid_search() -> None:
    assert candidate_count(1) == MIN_CANDIDATES
    assert candidate_count(100) >= 100


@pytest.mark.parametrize("text, query", [
    ("Redis cache", '"redis" OR "cache"'),
    ("When did Maria go to the climbing gym?", '"maria" OR "go" OR "climbing" OR "gym"'),
    ('NOT "redis* OR (memcached', '"redis" OR "memcached"'),
    ("caching, layer! caching", '"caching" OR "layer"'),
    ("what is it", '"what" OR "is" OR "it"'),
    ("  ...  ", ""),
])
def test_fts_query_makes_each_content_word_an_alternative_and_lets_no_fts5_syntax_through(
        text: str, query: str) -> None:
    assert fts_query(text) == query


@pytest.mark.parametrize("text, query", [
    ('"climbing gym"', '"climbing gym"'),
    ('"climbing gym" with Maria', '"climbing gym" AND ("climbing gym" OR "maria")'),
    ('"the" "gym" Maria', '"the" AND "gym" AND ("the" OR "gym" OR "maria")'),
    ('"OR (x*" y', '"OR x" AND ("OR x" OR "y")'),
])
def test_fts_query_requires_quoted_phrases_and_ranks_by_the_other_words(text: str, query: str) -> None:
    assert fts_query(text) == query
