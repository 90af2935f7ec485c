"""bench/memory_eval.py --sweep's feedback pass (issue 32, measured and not kept): the query it searches again
holds the query's own words first, then the best hit's words the query lacks, stop words and numbers left out."""

from __future__ import annotations

import sys
from pathlib import Path

from taskmem.core.memory_search import full_text_query

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))  # bench/ is scripts, not a package

from memory_eval_in_process import expanded_query  # noqa: E402


def test_the_feedback_query_adds_the_best_hits_new_words_most_frequent_first() -> None:
    query = full_text_query('What kind of dog did "Grace Hall" get?')
    expanded = expanded_query(query, "Grace: We adopted a beagle puppy, the beagle is 3 months old!", words=3)
    assert expanded.phrases == ("Grace Hall",)
    assert expanded.words == ("kind", "dog", "get", "beagle", "adopted", "puppy")


def test_a_feedback_text_with_nothing_new_leaves_the_query_as_it_was() -> None:
    query = full_text_query("beagle puppy")
    assert expanded_query(query, "The beagle puppy, 2 of them.") == query
