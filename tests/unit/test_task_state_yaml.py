"""The task-state YAML: the seed's pruning rules, valid YAML, and the budget as a guarantee."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from taskmem.core.plans import ItemStatus, Plan, PlanItem
from taskmem.core.task_state_yaml import (
    DecisionEntry, ErrorEntry, TaskStateFits, WorkspaceChanges, build_task_state, fit_task_state,
    render_task_state_yaml,
)
from taskmem.core.state_notes import Note, WaitNote
from taskmem.core.tasks import Task, TaskStatus
from taskmem.core.waits import ExternalKind, ExternalTarget
from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()


def _task(goal: str = "Migrate database from MySQL to PostgreSQL") -> Task:
    return Task(namespace="default", id="tsk_a1b2", name="migrate", status=TaskStatus.EXECUTING,
                created_at=1, updated_at=2, goal=goal, workspace="/Users/scott/projects/myapp")


def _plan(count: int, done: int, in_progress: int = 1) -> Plan:
    items = []
    for n in range(count):
        status = ItemStatus.COMPLETED if n < done else ItemStatus.IN_PROGRESS if n < done + in_progress \
            else ItemStatus.PENDING
        items.append(PlanItem(id=f"step-{n}", ordinal=n, title=f"Step {n}", status=status,
                              summary=f"summary of step {n}", depends_on=[f"step-{n - 1}"] if n else []))
    return Plan("tsk_a1b2", 3, items, 1_771_000_000_000_000)


def _decisions(count: int) -> list[DecisionEntry]:
    """Newest first, as the store returns them."""
    return [DecisionEntry(f"mem_{n}", f"decision number {n}", "", 1_771_000_000_000_000 + n)
            for n in reversed(range(count))]


def _errors(count: int) -> list[ErrorEntry]:
    return [ErrorEntry(f"mem_e{n}", "step-1", f"error number {n}", f"fixed by retry {n}", n)
            for n in reversed(range(count))]


def test_yaml_has_the_seed_schema_and_parses() -> None:
    view = build_task_state(_task(), _plan(5, 2), _decisions(2), _errors(1), WorkspaceChanges(3, 12, 5_000_000))
    data = yaml.safe_load(render_task_state_yaml(view))
    assert data["task"] == {"id": "tsk_a1b2", "goal": "Migrate database from MySQL to PostgreSQL",
                            "status": "executing", "workspace": "/Users/scott/projects/myapp"}
    assert data["plan"]["version"] == 3
    assert [s["status"] for s in data["subtasks"]] == ["completed", "completed", "in_progress", "pending", "pending"]
    assert data["subtasks"][3]["depends_on"] == ["step-2"]
    assert data["decisions_log"] == ["decision number 0", "decision number 1"]
    assert data["errors_encountered"] == [{"subtask": "step-1", "error": "error number 0",
                                           "resolution": "fixed by retry 0"}]
    assert data["workspace_changes"]["files_modified"] == 12


def test_only_the_ten_newest_decisions_and_five_newest_errors_are_shown() -> None:
    view = build_task_state(_task(), None, _decisions(14), _errors(8), None)
    assert [d.text for d in view.decisions] == [f"decision number {n}" for n in range(4, 14)]
    assert [e.error for e in view.errors] == [f"error number {n}" for n in range(3, 8)]


def test_a_plan_over_fifteen_items_shows_completed_ids_current_and_next_three_pending() -> None:
    view = build_task_state(_task(), _plan(40, 20), [], [], None)
    assert [s.id for s in view.subtasks] == ["step-20", "step-21", "step-22", "step-23"]
    assert (view.completed_count, view.total_subtasks) == (20, 40)
    text = render_task_state_yaml(view)
    assert "20/40 completed, 4 shown" in text
    assert yaml.safe_load(text)["plan"]["completed"] == [f"step-{n}" for n in range(20)]


def test_a_plan_of_fifteen_items_is_shown_whole() -> None:
    assert len(build_task_state(_task(), _plan(15, 3), [], [], None).subtasks) == 15


def test_ids_that_yaml_would_misread_are_quoted() -> None:
    plan = Plan("t", 1, [PlanItem(id="123", ordinal=0, title="x"), PlanItem(id="yes", ordinal=1, title="y")], 1)
    data = yaml.safe_load(render_task_state_yaml(build_task_state(_task(), plan, [], [], None)))
    assert [s["id"] for s in data["subtasks"]] == ["123", "yes"]


def test_a_tight_budget_drops_detail_in_the_documented_order_and_says_so() -> None:
    view = build_task_state(_task(), _plan(10, 4), _decisions(10), _errors(5), WorkspaceChanges(1, 2, 3))
    full, _, nothing = fit_task_state(view, COUNTER, 10_000)
    assert nothing == []
    text, fitted, omitted = fit_task_state(view, COUNTER, COUNTER.count(full) - 40)
    assert COUNTER.count(text) <= COUNTER.count(full) - 40
    assert omitted[0] == "workspace_changes"
    assert omitted[1].endswith("error resolutions")
    assert len(fitted.decisions) == 10  # decisions go only after every error
    assert yaml.safe_load(text)["task"]["id"] == "tsk_a1b2"


def test_a_remembered_fit_equals_a_fresh_one_and_follows_any_change_to_the_view() -> None:
    fits = TaskStateFits(COUNTER)
    view = build_task_state(_task(), _plan(40, 20), _decisions(10), _errors(5), WorkspaceChanges(1, 2, 3))
    fresh = fit_task_state(view, COUNTER, 200)
    assert fits.fit(view, 200) == fresh
    again = fits.fit(view, 200)
    assert again == fresh
    again[1].subtasks.clear()  # a caller changing what it was given changes nothing remembered
    assert fits.fit(view, 200) == fresh
    assert fits.fit(view, 400) == fit_task_state(view, COUNTER, 400)
    view.subtasks[0].active_issue = "the ENUM columns need a mapping"
    changed = fits.fit(view, 2000)
    assert changed == fit_task_state(view, COUNTER, 2000) and "ENUM columns" in changed[0]
    view.decisions[-1].text = "a newer decision"
    assert fits.fit(view, 2000) == fit_task_state(view, COUNTER, 2000)


def test_a_budget_too_small_for_the_task_line_gives_empty_text() -> None:
    view = build_task_state(_task(), _plan(3, 1), [], [], None)
    text, _, omitted = fit_task_state(view, COUNTER, 3)
    assert text == "" and omitted[-1].startswith("everything")


def test_the_goal_is_shortened_last() -> None:
    view = build_task_state(_task("word " * 400), _plan(3, 1), [], [], None)
    text, fitted, omitted = fit_task_state(view, COUNTER, 60)
    assert COUNTER.count(text) <= 60
    assert omitted[-1] == "goal shortened" and fitted.goal.endswith("…")


_texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=120)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.integers(0, 60), done=st.integers(0, 60), decisions=st.lists(_texts, max_size=14),
       errors=st.lists(st.tuples(_texts, _texts), max_size=8), goal=_texts, budget=st.integers(0, 1500),
       notes=st.lists(_texts, max_size=6), waits=st.lists(_texts, max_size=3))
def test_task_state_yaml_is_never_over_budget(items: int, done: int, decisions: list[str],
                                              errors: list[tuple[str, str]], goal: str, budget: int,
                                              notes: list[str], waits: list[str]) -> None:
    listed = [Note(f"u{n}", text, n) for n, text in enumerate(notes)]
    view = build_task_state(
        _task(goal), _plan(items, min(done, items)) if items else None,
        [DecisionEntry(f"m{n}", text, "", n) for n, text in enumerate(decisions)],
        [ErrorEntry(f"e{n}", "s", e, r, n) for n, (e, r) in enumerate(errors)], WorkspaceChanges(1, 1, None),
        constraints=listed, questions=listed, risks=listed,
        waits=[WaitNote(f"w{n}", "external", text, n, n * 1_000_000 or None, None,
                        ExternalTarget(text, ExternalKind.INPUT, text, f"step-{n}") if n % 2 else None)
               for n, text in enumerate(waits)])  # every other one a wait on a person
    text, _, _ = fit_task_state(view, COUNTER, budget)
    assert COUNTER.count(text) <= budget
    if text:
        assert yaml.safe_load(text)["task"]["id"] == "tsk_a1b2"
