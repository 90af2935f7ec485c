"""Convex fusion and the FTS5 query of a text, without a database."""

from __future__ import annotations

import pytest

from taskmem.core.memory_search import (
    FULLTEXT_WEIGHT, MIN_CANDIDATES, SEMANTIC_WEIGHT, SearchMode, candidate_count, convex_fusion, fts_query,
)


def test_convex_fusion_adds_the_weighted_share_and_similarity_with_a_known_similarity_for_text_only_hits() -> None:
    hits = convex_fusion([(10, 0.9), (20, 0.5), (30, 0.2)], [(30, 0.8), (40, 0.7)], {10: 0.1}, limit=10)
    scores = {hit.seq: hit.score for hit in hits}
    text, near = FULLTEXT_WEIGHT, SEMANTIC_WEIGHT
    assert scores == pytest.approx({10: text * 0.9 + near * 0.1, 20: text * 0.5,  # 20: not embedded yet
                                    30: text * 0.2 + near * 0.8, 40: near * 0.7})
    assert [hit.seq for hit in hits] == [30, 10, 40, 20]
    assert [(h.fulltext_rank, h.semantic_rank) for h in hits] == [(3, 1), (1, 0), (0, 2), (2, 0)]
    assert hits[1].found_by == (SearchMode.FULLTEXT,)  # its similarity was looked up, not found by the semantic list


def test_convex_fusion_breaks_ties_by_the_better_single_rank_then_the_lower_seq() -> None:
    hits = convex_fusion([(9, 0.5), (8, 0.25)], [(7, 0.5), (5, 0.25)], {}, limit=4, weights=(0.5, 0.5))
    assert [hit.seq for hit in hits] == [7, 9, 5, 8]
    assert convex_fusion([], [], {}, limit=3) == []


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
