"""Cost accounting's pure parts: budgets, the usage an endpoint reports, and who model work is for."""

from __future__ import annotations

import asyncio

import pytest

from taskmem.config import ConfigError, parse_model_budgets
from taskmem.core.model_usage import Budget, ModelCall, Outcome, Purpose, Share, apportion, refusal
from taskmem.providers.model_meter import current_work, model_work, reported_usage


def test_a_budget_is_used_up_once_its_tokens_are_reached_and_the_refusal_names_it() -> None:
    assert not Budget(100, 99).exhausted
    assert Budget(100, 100).exhausted
    assert "'team-a'" in refusal("team-a", Budget(100, 120)) and "120 of 100" in refusal("team-a", Budget(100, 120))


def test_budgets_read_namespace_equals_tokens_and_refuse_anything_else() -> None:
    assert parse_model_budgets(("a=100", " b = 2000 ")) == {"a": 100, "b": 2000}
    for bad in ("a", "=5", "a=-1", "a=lots"):
        with pytest.raises(ConfigError, match="model_token_budgets"):
            parse_model_budgets((bad,))


def test_reported_usage_reads_prompt_and_completion_tokens_and_zero_for_what_is_missing() -> None:
    assert reported_usage({"usage": {"prompt_tokens": 12, "completion_tokens": 3}}, "completion_tokens") == (12, 3)
    assert reported_usage({"usage": {"prompt_tokens": 7, "total_tokens": 7}}, "completion_tokens") == (7, 0)
    assert reported_usage({"choices": []}, "completion_tokens") == (0, 0)
    assert reported_usage({"usage": {"prompt_tokens": "x", "completion_tokens": -1}}, "completion_tokens") == (0, 0)


def test_nested_model_work_keeps_what_it_does_not_name_and_restores_the_outer_work() -> None:
    with model_work("ns", "tsk_1"):
        with model_work(purpose=Purpose.ADJUDICATION):
            assert (current_work().namespace, current_work().task_id, current_work().purpose) == (
                "ns", "tsk_1", Purpose.ADJUDICATION)
        assert current_work().purpose is None
    assert current_work().namespace == ""


def test_model_work_joins_an_async_with_and_follows_tasks_started_inside() -> None:
    async def seen_by_a_task() -> str:
        await asyncio.sleep(0)
        return current_work().task_id

    async def run() -> tuple[str, str]:
        async with model_work("ns", "tsk_2", Purpose.QUERY):
            inner = asyncio.create_task(seen_by_a_task())
        return await inner, current_work().task_id

    assert asyncio.run(run()) == ("tsk_2", "")


def test_a_shared_call_is_split_by_weight_into_whole_parts_that_add_up_to_it() -> None:
    call = ModelCall("", "", Purpose.EMBEDDING, "openai:m", Outcome.OK, 10, 0, 1001)
    parts = apportion(call, [Share("ns", "a", 39), Share("ns", "b", 8)])
    assert [(p.namespace, p.task_id, p.tokens_in, p.latency_us) for p in parts] == [
        ("ns", "a", 9, 831), ("ns", "b", 1, 170)]
    merged = apportion(call, [Share("ns", "a", 1), Share("ns", "a", 3)])
    assert [(p.task_id, p.tokens_in) for p in merged] == [("a", 10)]
    assert apportion(call, []) == [call]
