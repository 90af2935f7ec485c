"""A change of a task's state told in words, as GetTaskStateHistory and the web view's history show it."""

from __future__ import annotations

from taskmem.core.audit import describe_change


def test_a_superseding_decision_names_both_decisions_and_the_key() -> None:
    said = describe_change("EVENT_TYPE_TASK_STATE_DECISION_ADDED",
                           {"uid": "d_12", "text": "Use X", "outcome": "superseded", "target_uid": "d_3"},
                           "ops-bot", "", "Use Y")
    assert said == "decision d_12 'Use X' replaces d_3 'Use Y' by key ops-bot"


def test_a_completed_step_is_named_by_its_place_and_title() -> None:
    said = describe_change("EVENT_TYPE_PLAN_ITEM_UPDATED",
                           {"ordinal": 2, "title": "Ship", "status": "PLAN_ITEM_STATUS_COMPLETED"}, "agent-7", "planner")
    assert said == "step 3 'Ship' completed by key agent-7 (agent planner)"


def test_a_wait_resolved_by_a_key_and_one_timed_out_by_the_server() -> None:
    assert describe_change("EVENT_TYPE_WAIT_RESOLVED", {"id": "w_9"}, "ops-bot") == "wait w_9 resolved by key ops-bot"
    assert describe_change("EVENT_TYPE_WAIT_TIMED_OUT", {"id": "w_9"}) == "wait w_9 timed out"


def test_a_long_text_is_cut_and_its_spacing_folded() -> None:
    said = describe_change("EVENT_TYPE_TASK_CREATED", {"name": "a\n  b " + "x" * 200})
    assert said.startswith("task 'a b xxx") and said.endswith("…' created") and len(said) < 110
