"""The QueryTask routing rule: status questions to the utility model, analysis and planning to the second."""

from __future__ import annotations

import pytest

from taskmem.core.model_routing import ModelTier, route_question

UTILITY, SECOND = ModelTier.UTILITY, ModelTier.SECOND


@pytest.mark.parametrize(("question", "tier"), [
    ("where was I?", UTILITY),
    ("Where were we?", UTILITY),
    ("what's next?", UTILITY),
    ("What is next in the plan?", UTILITY),  # a status question, though it names the plan
    ("which step am I on?", UTILITY),
    ("what's left?", UTILITY),
    ("status", UTILITY),
    ("how far along is the migration?", UTILITY),
    ("what did the backup produce?", UTILITY),  # neither kind: the cheap model
    ("should I change the plan?", SECOND),
    ("analyze the errors", SECOND),
    ("Analyse why the deploy keeps failing", SECOND),
    ("compare pgloader with a manual dump", SECOND),
    ("what are the risks of skipping verification?", SECOND),
    ("explain the root cause of the timeout", SECOND),
    ("recommend an alternative to Redis", SECOND),
])
def test_each_kind_of_question_goes_to_its_model(question: str, tier: ModelTier) -> None:
    assert route_question(question) is tier
