"""Issue 11's core: state notes (only current items), the explicit-supersedes and stated-candidate pipeline,
the task-state YAML with constraints, questions, risks, waits and completed ids under its budget, and
GetProgress's summary."""

from __future__ import annotations

import asyncio

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from taskmem.core.plans import ItemStatus, Plan, PlanItem
from taskmem.core.progress import compute_progress
from taskmem.core.reconcile import SEED_THRESHOLDS, Prepared
from taskmem.core.state_items import Candidate, StateItem, StateItemType, compute_uid
from taskmem.core.state_records import StoredStateItem
from taskmem.core.state_notes import DECISION_KIND, ERROR_KIND, EntryLink, Note, StateNotes, WaitNote, state_notes
from taskmem.core.task_state_yaml import DecisionEntry, ErrorEntry, build_task_state, fit_task_state
from taskmem.core.tasks import Task, TaskStatus
from taskmem.core.waits import ExternalTarget, Wait
from taskmem.core.reconcile import STATED_REF
from taskmem.state.thread_reconciliation import (
    plan_reconciliation, prepare_agent_candidates, stated_candidate,
)
from taskmem.store.state.state_items import stored
from taskmem.tiktoken_offline import token_counter

COUNTER = token_counter()
TASK = Task(namespace="default", id="tsk_1", name="dash", status=TaskStatus.EXECUTING, created_at=0, updated_at=0,
            goal="Ship the dashboard")


def _item(kind: str, text: str, status: str = "", created: int = 1, **fields: object) -> StoredStateItem:
    kind_ = StateItemType(kind)
    default = {"question": "open", "action": "open"}.get(kind, "active")
    return StoredStateItem(uid=compute_uid(kind_, text), type_tag=kind_, text=text, status=status or default,
                     created_at=created, last_seen_at=created, source="agent", **fields)  # type: ignore[arg-type]


def _plan(count: int, done: int) -> Plan:
    return Plan("tsk_1", 2, [PlanItem(id=f"s{n}", ordinal=n, title=f"Step {n}", status=ItemStatus.COMPLETED if n < done
                                      else ItemStatus.IN_PROGRESS if n == done else ItemStatus.PENDING)
                             for n in range(count)], 1_771_000_000_000_000)


# --- notes ---------------------------------------------------------------------------------------

def test_notes_hold_only_current_items_and_errors_apart_from_actions() -> None:
    old = _item("decision", "Use Chart.js", "superseded", 1)
    new = _item("decision", "Use Vega-Lite instead of Chart.js", created=2)
    error = _item("action", "npm ci failed", "blocked", 3)
    answered = _item("question", "Dark mode?", "answered", 4)
    items = [old, new, error, answered, _item("question", "Which region?", created=5),
             _item("constraint", "No trackers", created=6), _item("risk", "CDN quota", created=7)]
    links = [EntryLink(new.uid, "mem_1", DECISION_KIND, "s1", "", 20),
             EntryLink(error.uid, "mem_2", ERROR_KIND, "s2", "", 30),
             EntryLink(error.uid, "mem_3", ERROR_KIND, "s2", "retried", 40)]
    wait = Wait("default", "wt_1", "release approved", ExternalTarget("rm"), 50, "c", "tsk_1", timeout_us=7_200_000_000)
    notes = state_notes(items, links, [wait])
    assert [n.text for n in notes.decisions] == ["Use Vega-Lite instead of Chart.js"]
    assert (notes.decisions[0].memory_entry_id, notes.decisions[0].subtask_id) == ("mem_1", "s1")
    assert [n.text for n in notes.questions] == ["Which region?"]
    assert [n.text for n in notes.constraints] == ["No trackers"] and [n.text for n in notes.risks] == ["CDN quota"]
    assert [(n.text, n.resolution) for n in notes.errors] == [("npm ci failed", "retried")]
    assert notes.waits == [WaitNote("wt_1", "external", "release approved", 50, 7_200_000_000, 7_200_000_050)]


# --- the pipeline ------------------------------------------------------------------------------

def _plan_of(existing: list[StateItem], prepared: Prepared):  # noqa: ANN202
    return asyncio.run(plan_reconciliation([stored(i, "tsk_1", 1) for i in existing], {}, prepared, None,
                                           SEED_THRESHOLDS, "tsk_1", 10))


def test_an_explicit_supersedes_of_another_type_or_an_unknown_uid_is_ordinary_reconciliation() -> None:
    old = _item("constraint", "Use X for the charts")
    prepared = prepare_agent_candidates([Candidate("decision", "Use Y", confidence="high", supersedes=old.uid,
                                                   source="agent"),
                                         Candidate("decision", "Use Z", confidence="high", supersedes="d_unknown",
                                                   source="agent")], {}, 25)
    plan = _plan_of([old], prepared)
    assert [r.outcome for r in plan.report.results] == ["inserted", "inserted"]
    assert all(i.status != "superseded" for i in plan.writes)


def test_a_stated_decision_with_change_language_supersedes_and_keeps_no_stand_in_ref() -> None:
    old = _item("decision", "Use Chart.js for the dashboard charts")
    prepared = stated_candidate(Candidate("decision", "Use Plotly for the dashboard charts instead of Chart.js",
                                          confidence="high", source="agent"), 10)
    plan = _plan_of([old], prepared)
    by_uid = {i.uid: i for i in plan.writes}
    assert by_uid[old.uid].status == "superseded"
    assert all(STATED_REF not in i.refs for i in plan.writes)
    assert by_uid[old.uid].supersession_evidence["ref_msg_id"] is None  # type: ignore[index]


def test_an_agent_candidate_without_supersedes_keeps_the_user_message_guard() -> None:
    old = _item("decision", "Use Chart.js for the dashboard charts")
    prepared = prepare_agent_candidates([Candidate("decision", "Use Plotly for the dashboard charts instead of "
                                                   "Chart.js", confidence="high", source="agent")], {}, 25)
    plan = _plan_of([old], prepared)
    assert {i.uid: i for i in plan.writes}.get(old.uid) is None or \
        {i.uid: i for i in plan.writes}[old.uid].status != "superseded"


# --- the YAML ----------------------------------------------------------------------------------

def _notes(prefix: str, count: int) -> list[Note]:
    return [Note(f"u{prefix}{n}", f"{prefix} number {n}", n) for n in range(count)]


def test_the_yaml_lists_completed_ids_of_a_long_plan_and_the_state_lists() -> None:
    waits = [WaitNote("wt_1", "external", "release approved", 1_771_000_000_000_000, 3_600_000_000, None)]
    view = build_task_state(TASK, _plan(60, 29), [DecisionEntry("mem_1", "Use Vega-Lite", "", 5, "d_1")], [], None,
                            constraints=_notes("constraint", 2), questions=_notes("question", 1),
                            risks=_notes("risk", 1), waits=waits)
    text, _, omitted = fit_task_state(view, COUNTER, 1500)
    data = yaml.safe_load(text)
    assert data["plan"]["completed"] == [f"s{n}" for n in range(29)] and omitted == []
    assert data["decisions_log"] == ["Use Vega-Lite"]
    assert data["constraints"] == ["constraint number 0", "constraint number 1"]
    assert data["open_questions"] == ["question number 0"] and data["open_risks"] == ["risk number 0"]
    assert data["open_waits"] == [{"id": "wt_1", "kind": "external", "criteria": "release approved",
                                   "since": "2026-02-13T16:26:40Z", "timeout": "1h"}]


def test_under_a_tight_budget_the_current_item_decisions_and_waits_outlast_the_completed_ids() -> None:
    waits = [WaitNote("wt_1", "timer", "cool-down", 1, None, None)]
    view = build_task_state(TASK, _plan(60, 29), [DecisionEntry("m", "Use Vega-Lite", "", 5)],
                            [ErrorEntry("e", "s29", "503 on healthz", "", 6)], None,
                            constraints=_notes("constraint", 1), waits=waits)
    text, fitted, omitted = fit_task_state(view, COUNTER, 150)
    assert COUNTER.count(text) <= 150
    assert any("completed ids" in o for o in omitted)
    data = yaml.safe_load(text)
    assert data["decisions_log"] == ["Use Vega-Lite"] and data["open_waits"][0]["criteria"] == "cool-down"
    assert "s29" in [s.id for s in fitted.subtasks]


_texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=st.integers(0, 80), done=st.integers(0, 80), notes=st.lists(_texts, max_size=12),
       waits=st.lists(_texts, max_size=4), budget=st.integers(0, 1500))
def test_the_yaml_with_state_lists_is_never_over_budget(items: int, done: int, notes: list[str], waits: list[str],
                                                        budget: int) -> None:
    listed = [Note(f"u{n}", text, n) for n, text in enumerate(notes)]
    view = build_task_state(TASK, _plan(items, min(done, items)) if items else None,
                            [DecisionEntry("m", n.text, "", n.created_at) for n in listed], [], None,
                            constraints=listed, questions=listed, risks=listed,
                            waits=[WaitNote(f"w{n}", "timer", c, n, n or None, None) for n, c in enumerate(waits)])
    text, _, _ = fit_task_state(view, COUNTER, budget)
    assert COUNTER.count(text) <= budget
    if text:
        assert yaml.safe_load(text)["task"]["id"] == "tsk_1"


# --- GetProgress's summary ---------------------------------------------------------------------

def test_the_progress_summary_names_every_completed_id_and_the_state_in_few_tokens() -> None:
    notes = StateNotes(decisions=_notes("decision", 8), constraints=_notes("constraint", 3),
                       questions=_notes("question", 2),
                       waits=[WaitNote("wt_1", "external", "release approved", 1, 7_200_000_000, None)])
    progress = compute_progress(TASK, _plan(60, 29), None, [], notes)
    assert COUNTER.count(progress.summary) < 400
    first = progress.summary.splitlines()[0]
    assert all(f"s{n}" in first for n in range(29))
    assert "Decisions (+3 older): decision number 3" in progress.summary
    assert "Waiting on: release approved (external, wt_1, times out after 2h)." in progress.summary
    assert [n.text for n in progress.decisions][-1] == "decision number 7"


def test_the_newest_recorded_error_is_the_last_error_when_no_action_failed_later() -> None:
    notes = StateNotes(errors=[Note("a_1", "npm ci failed", 10, subtask_id="s3")])
    assert compute_progress(TASK, _plan(5, 2), None, [], notes).last_error == "npm ci failed in s3"
