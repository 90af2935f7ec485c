"""core/valid_time, core/knowledge.value_at and core/task_state_diff without a database."""

from __future__ import annotations

from taskmem.core.knowledge import Knowledge, KnowledgeCategory, KnowledgeValue, ValueOutcome, value_at
from taskmem.core.state_items import StateItemType
from taskmem.core.state_records import StoredStateItem
from taskmem.core.task_state_diff import unified_state_diff
from taskmem.core.valid_time import current_first, item_as_of


def _retired(created: int, retired: int) -> StoredStateItem:
    return StoredStateItem(uid="d_1", type_tag=StateItemType.DECISION, text="Use Redis", status="superseded",
                           replaced_by="d_2", supersession_evidence={"matched_by": "stated"}, created_at=created,
                           valid_to=retired, prior_status="active")


def test_an_item_does_not_exist_before_it_was_created() -> None:
    assert item_as_of(_retired(100, 200), 99) is None


def test_an_item_superseded_later_shows_the_status_it_held_with_no_replacement() -> None:
    then = item_as_of(_retired(100, 200), 150)
    assert then is not None and (then.status, then.replaced_by, then.supersession_evidence, then.valid_to) == (
        "active", None, None, None)


def test_an_item_superseded_by_then_stays_superseded() -> None:
    assert item_as_of(_retired(100, 200), 200) == _retired(100, 200)


def _knowledge() -> Knowledge:
    history = (KnowledgeValue("Node 18", "ci", 0.8, 100, ValueOutcome.REPLACED, 300),
               KnowledgeValue("Node 16", "bot", 0.1, 400, ValueOutcome.REJECTED))
    return Knowledge("default", "kn_1", KnowledgeCategory.FACT, "node", "Node 20", "ci", 0.9, 3, 100, 400,
                     history, valid_from=300)


def test_knowledge_as_of_a_moment_has_the_value_that_held_then() -> None:
    assert value_at(_knowledge(), 99) is None
    then = value_at(_knowledge(), 299)
    assert then is not None and (then.value, then.valid_from) == ("Node 18", 100)
    now = value_at(_knowledge(), 300)
    assert now is not None and now.value == "Node 20"


def test_superseded_hits_rank_after_every_current_one_each_group_keeping_its_order() -> None:
    hits = ["old-a", "new-a", "old-b", "new-b", "new-c"]
    assert current_first(hits, lambda h: h.startswith("old"), 4) == ["new-a", "new-b", "new-c", "old-a"]


def test_the_diff_is_unified_with_task_and_cursor_headers_and_empty_when_equal() -> None:
    diff = unified_state_diff("tsk_1", 4, 9, "a: 1\nb: 2\n", "a: 1\nb: 3\n")
    assert diff.splitlines()[:2] == ["--- tsk_1@4", "+++ tsk_1@9"] and "-b: 2" in diff and "+b: 3" in diff
    assert unified_state_diff("tsk_1", 4, 9, "a: 1\n", "a: 1\n") == ""
