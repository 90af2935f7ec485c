"""Convex fusion and the FTS5 query of a text, without a database."""

from __future__ import annotations

import pytest

from taskmem.core.memory_search import (
    FULLTEXT_WEIGHT, MIN_CANDIDATES, SEMANTIC_WEIGHT, Hit, SearchMode, candidate_count, convex_fusion, fts_query,
    neighbour_pairs,
    spread_over_windows,
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


def _hits(*scored: tuple[int, float]) -> list[Hit]:
    return [Hit(seq, score) for seq, score in scored]


def test_spreading_lets_a_farther_turn_pass_the_neighbours_of_a_hit_already_chosen() -> None:
    hits = _hits((10, 0.80), (11, 0.79), (12, 0.78), (40, 0.76))
    task_of = {10: "t", 11: "t", 12: "t", 40: "t"}
    spread = spread_over_windows(hits, task_of, limit=4, span=2, penalty=0.05)
    assert [hit.seq for hit in spread] == [10, 40, 11, 12]
    assert [hit.score for hit in spread] == [0.80, 0.76, 0.79, 0.78]  # the fused scores, unchanged


def test_spreading_lowers_only_candidates_of_the_same_task_within_the_span() -> None:
    hits = _hits((10, 0.80), (11, 0.79), (13, 0.78), (50, 0.76))
    other_task = spread_over_windows(hits, {10: "a", 11: "b", 13: "a", 50: "a"}, limit=4, span=2, penalty=0.05)
    assert [hit.seq for hit in other_task] == [10, 11, 13, 50]  # 11 is another task's, 13 is 3 seqs away
    unknown = spread_over_windows(hits, {}, limit=4, span=2, penalty=0.05)
    assert [hit.seq for hit in unknown] == [10, 11, 13, 50]


def test_each_chosen_neighbour_lowers_a_candidate_again_and_the_limit_holds() -> None:
    hits = _hits((10, 0.80), (12, 0.795), (11, 0.79), (30, 0.70))
    task_of = dict.fromkeys((10, 11, 12, 30), "t")
    # 12 loses 0.05 for 10 and still beats 30; then 11 has lost 0.1 (for 10 and 12): 30 comes first.
    assert [hit.seq for hit in spread_over_windows(hits, task_of, limit=3, span=2, penalty=0.05)] == [10, 12, 30]
    assert spread_over_windows([], task_of, limit=3) == []


def test_without_a_penalty_spreading_keeps_the_fused_order() -> None:
    hits = _hits((10, 0.8), (11, 0.8), (12, 0.7))
    assert [hit.seq for hit in spread_over_windows(hits, dict.fromkeys((10, 11, 12), "t"), limit=3,
                                                   penalty=0.0)] == [10, 11, 12]


def test_given_how_alike_the_candidates_are_only_a_neighbour_saying_the_same_is_lowered() -> None:
    hits = _hits((10, 0.80), (11, 0.79), (12, 0.78), (40, 0.76))
    task_of = dict.fromkeys((10, 11, 12, 40), "t")
    # 11 answers 10 (not alike): it keeps its place; 12 restates 10: it gives way to 40.
    alike = {(10, 11): 0.45, (10, 12): 0.85, (11, 12): 0.5}
    assert [hit.seq for hit in spread_over_windows(hits, task_of, limit=4, span=4, alike=alike,
                                                   threshold=0.6)] == [10, 11, 40, 12]
    # a pair not measured (an entry not embedded yet) is not lowered
    assert [hit.seq for hit in spread_over_windows(hits, task_of, limit=4, span=4, alike={},
                                                   threshold=0.6)] == [10, 11, 12, 40]


def test_a_neighbour_more_like_the_question_than_like_the_chosen_hit_keeps_its_place() -> None:
    hits = _hits((10, 0.80), (11, 0.79), (12, 0.78), (40, 0.76))
    task_of = dict.fromkeys((10, 11, 12, 40), "t")
    alike = {(10, 11): 0.7, (10, 12): 0.7, (11, 12): 0.7}
    # 11 and 12 are both 0.7 alike with 10; 11 is more like the question (0.75) than like 10, 12 is not (0.5)
    relevance = {10: 0.8, 11: 0.75, 12: 0.5, 40: 0.6}
    assert [hit.seq for hit in spread_over_windows(hits, task_of, limit=4, span=4, penalty=0.05, alike=alike,
                                                   threshold=0.6, relevance=relevance)] == [10, 11, 40, 12]
    # without the question's similarities both are lowered
    assert [hit.seq for hit in spread_over_windows(hits, task_of, limit=4, span=4, penalty=0.05, alike=alike,
                                                   threshold=0.6)] == [10, 40, 11, 12]


def test_the_pairs_asked_about_are_one_tasks_entries_within_the_span() -> None:
    task_of = {10: "a", 11: "a", 14: "a", 15: "b", 19: "a", 40: "a"}
    assert neighbour_pairs(task_of, 4) == [(10, 11), (10, 14), (11, 14)]  # 15 is b's; 19 is 5 after 14
