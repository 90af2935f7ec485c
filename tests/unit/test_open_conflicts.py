"""core/open_conflicts and the renderers that use it: current items in conflict with each other are one
question, out of the plain lists, in the notes, the task-state YAML, GetProgress's summary and RenderState;
retiring a side releases its rivals; budgets hold."""

from __future__ import annotations

import dataclasses

import pytest

import yaml
from hypothesis import given, settings, strategies as st

from taskmem.core.open_conflicts import Answer, flagged_alone, released, settle, settle_with, split_conflicts
from taskmem.core.errors import FailedPrecondition
from taskmem.core.progress import compute_progress
from taskmem.core.state_items import StateItemType, compute_uid
from taskmem.core.state_notes import state_notes
from taskmem.core.state_records import StoredStateItem
from taskmem.core.state_render import render_state
from taskmem.core.task_state_yaml import build_task_state, fit_task_state
from taskmem.core.tasks import Task, TaskStatus
from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()
TASK = Task(namespace="default", id="tsk_1", name="cache", status=TaskStatus.EXECUTING, created_at=0, updated_at=0)


def _item(text: str, created: int, kind: str = "decision", rivals: tuple[str, ...] = (), status: str = "",
          conflict: bool | None = None) -> StoredStateItem:
    kind_ = StateItemType(kind)
    return StoredStateItem(uid=compute_uid(kind_, text), type_tag=kind_, text=text,
                           status=status or ("open" if kind in ("action", "question") else "active"),
                           created_at=created, last_seen_at=created, source="agent",
                           conflict=bool(rivals) if conflict is None else conflict, conflict_with=list(rivals))


def _pair(old: str, new: str, created: int = 1) -> tuple[StoredStateItem, StoredStateItem]:
    old_uid, new_uid = compute_uid("decision", old), compute_uid("decision", new)
    return _item(old, created, rivals=(new_uid,)), _item(new, created + 1, rivals=(old_uid,))


def test_items_naming_each_other_are_one_conflict_oldest_first_and_out_of_the_plain_items() -> None:
    redis, no_redis = _pair("Use Redis for caching", "Do not use Redis for caching")
    plain_item = _item("Deploy on Fridays", 0)
    plain, conflicts = split_conflicts([no_redis, plain_item, redis])
    assert plain == [plain_item]
    assert [c.uids for c in conflicts] == [[redis.uid, no_redis.uid]]
    assert conflicts[0].question() == (f"does [{no_redis.uid}] Do not use Redis for caching replace"
                                       f" [{redis.uid}] Use Redis for caching, stand beside it, or say the same?")


def test_a_rival_that_is_not_current_leaves_a_plain_unmarked_item() -> None:
    redis, _ = _pair("Use Redis for caching", "Do not use Redis for caching")
    plain, conflicts = split_conflicts([redis])
    assert (plain, conflicts) == ([redis], [])
    assert not flagged_alone(redis)  # its named rival was retired: nothing to mark
    assert flagged_alone(_item("Cache on the client", 3, conflict=True))  # flagged, no rival named


def test_a_chain_of_conflicts_is_one_question_naming_all_three() -> None:
    a, b, c = (compute_uid("decision", t) for t in ("A", "B", "C"))
    items = [_item("A", 1, rivals=(b,)), _item("B", 2, rivals=(a, c)), _item("C", 3, rivals=(b,))]
    plain, conflicts = split_conflicts(items)
    assert plain == [] and [x.uids for x in conflicts] == [[a, b, c]]
    assert conflicts[0].question() == f"does [{c}] C replace [{a}] A or [{b}] B, stand beside them, or say the same?"


def test_releasing_a_retired_item_clears_a_rival_with_no_other_current_rival() -> None:
    a, b, c = (compute_uid("decision", t) for t in ("A", "B", "C"))
    only = _item("B", 2, rivals=(a,))
    two = _item("C", 3, rivals=(a, b))
    changed = released(a, [only, two, _item("D", 4)], lambda uid: uid in (b, c))
    assert [(x.uid, x.conflict, x.conflict_with) for x in changed] == [(b, False, []), (c, True, [b])]


def test_settle_with_asks_the_question_and_names_the_call_for_each_answer() -> None:
    text = settle_with("d_new", "d_old")
    assert "does [d_new] replace [d_old], stand beside it, or say the same?" in text
    for answer in ("REPLACES", "STANDS_BESIDE", "SAME"):
        assert f"StateService.AnswerQuestion(new_uid: d_new, old_uid: d_old, answer: {answer})" in text


@pytest.mark.parametrize(("answer", "retired", "linked_left"), [
    (Answer.REPLACES, "old", False), (Answer.SAME, "new", False), (Answer.STANDS_BESIDE, None, False)])
def test_an_answer_settles_the_pair_and_keeps_the_other_questions(answer: Answer, retired: str | None,
                                                                  linked_left: bool) -> None:
    old, new = _pair("Use Redis for caching", "Use Memcached for caching")
    other = compute_uid("decision", "Cache nothing")
    old = dataclasses.replace(old, conflict_with=[*old.conflict_with, other], refs=["m0"])
    new = dataclasses.replace(new, refs=["m1"])
    settled = settle(answer, new, old, "person", 9)
    assert settled.new.conflict_with == [] and settled.old.conflict_with == [other] and settled.old.conflict
    assert not settled.new.conflict
    states = {"old": settled.old, "new": settled.new}
    for name, item in states.items():
        assert item.active is (name != retired)
    if retired == "old":
        assert settled.old.replaced_by == new.uid and settled.old.supersession_evidence["matched_by"] == "answered by person"
    if retired == "new":
        assert settled.new.replaced_by == old.uid and settled.old.refs == ["m0", "m1"]
    with pytest.raises(FailedPrecondition):
        settle(answer, settled.new, settled.old, "person", 10)  # answered: no longer an open question


def test_notes_yaml_and_progress_ask_the_conflict_once() -> None:
    redis, no_redis = _pair("Use Redis for caching", "Do not use Redis for caching", created=2)
    superseded = _item("Use Memcached", 1, status="superseded")
    items = [superseded, _item("Deploy on Fridays", 0), redis, no_redis]
    notes = state_notes(items, [], [])
    assert [n.text for n in notes.decisions] == ["Deploy on Fridays"]
    assert [[n.text for n in c.items] for c in notes.conflicts] == [["Use Redis for caching",
                                                                     "Do not use Redis for caching"]]
    view = build_task_state(TASK, None, [], [], None, conflicts=notes.conflicts)
    text, _, omitted = fit_task_state(view, COUNTER, 1500)
    data = yaml.safe_load(text)
    assert omitted == [] and data["open_conflicts"][0]["uids"] == [redis.uid, no_redis.uid]
    assert data["open_conflicts"][0]["question"].startswith(f"does [{no_redis.uid}]")
    assert "AnswerQuestion" in text
    summary = compute_progress(TASK, None, None, [], notes).summary
    assert summary.count("Do not use Redis for caching") == 1 and "AnswerQuestion" in summary


def test_render_state_puts_the_conflict_line_first_and_counts_its_items() -> None:
    redis, no_redis = _pair("Use Redis for caching", "Do not use Redis for caching")
    text, rendered, omitted = render_state([_item("Deploy on Fridays", 5), no_redis, redis], COUNTER, 500, 40)
    lines = text.splitlines()
    assert lines[1] == (f"QUESTION DECISION does [{no_redis.uid}] Do not use Redis for caching replace"
                        f" [{redis.uid}] Use Redis for caching, stand beside it, or say the same?")
    assert lines[2].endswith("Deploy on Fridays [refs:0]") and (rendered, omitted) == (3, 0)
    assert render_state([no_redis, redis], COUNTER, 500, 1)[1:] == (0, 2)  # max_items counts both sides


@settings(max_examples=40, deadline=None)
@given(texts=st.lists(st.text(min_size=1, max_size=120), min_size=2, max_size=12, unique=True),
       budget=st.integers(0, 300))
def test_budgets_hold_with_conflicts(texts: list[str], budget: int) -> None:
    uids = [compute_uid("decision", t) for t in texts]
    # Pair neighbours: 0-1, 2-3, … are conflicts; a last odd one is plain.
    items = [_item(t, n, rivals=(uids[n ^ 1],) if (n ^ 1) < len(texts) else ()) for n, t in enumerate(texts)]
    text, rendered, omitted = render_state(items, COUNTER, budget, 40)
    assert COUNTER.count(text) <= budget and rendered + omitted == len(items)
    notes = state_notes(items, [], [])
    view = build_task_state(TASK, None, [], [], None, conflicts=notes.conflicts)
    fitted, _, _ = fit_task_state(view, COUNTER, budget)
    assert COUNTER.count(fitted) <= budget
