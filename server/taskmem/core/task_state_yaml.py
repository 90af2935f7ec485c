"""The always-in-context task state (GetTaskState, the first thing an agent reads): pruning rules, YAML rendering and the budget fit.

It carries what an agent needs to resume: the current item with its active issue, the completed
items, the next items whose dependencies are met, and from the thread's reconciled state (see
core/state_notes) the active decisions, constraints, open questions and risks, the open waits and
the last errors, and `current`: who holds which subtask under a claim (ClaimPlanItem). A superseded decision is never in it. Current items in conflict with each other are
not listed as decisions or constraints: each group is one entry of `open_conflicts`, a question naming
every side and its uid (core/open_conflicts), until the caller retires all sides but one.

The view keeps the 10 newest active decisions, the 10 newest constraints, questions and risks and
the 5 newest errors and open conflicts. A plan over 15 items lists its completed items as ids only (`plan.completed`),
and in full only the items in progress, blocked or failed and the next three ready ones (the rest
are counted). fit_task_state then drops detail in DROP_ORDER until the YAML is within the token
budget, and reports each step it took in `omitted`.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import re
from collections.abc import Callable, Sequence

from taskmem.core.open_conflicts import SETTLE_HINT, OpenConflict
from taskmem.core.plans import ANSWER_HINT, DONE, ItemStatus, Plan, PlanItem
from taskmem.core.state_notes import Note, WaitNote
from taskmem.core.tasks import Task, TaskStatus
from taskmem.core.tokens import TokenCounter
from taskmem.core.waits import ExternalKind, format_duration

MAX_DECISIONS = 10
MAX_ERRORS = 5
MAX_NOTES = 10  # constraints, open questions and open risks, each
MAX_WAITS = 10
MAX_CONFLICTS = 5
COLLAPSE_OVER = 15
NEXT_PENDING = 3
SUMMARY_CHARS = 100
NOTE_CHARS = 300  # a state item's text as the view shows it


@dataclasses.dataclass
class Subtask:
    id: str
    status: ItemStatus
    summary: str = ""
    active_issue: str = ""
    depends_on: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class DecisionEntry:
    memory_entry_id: str  # "" for a decision no AddDecision stated (extracted or upserted)
    text: str
    subtask_id: str
    created_at: int
    uid: str = ""  # the state item


@dataclasses.dataclass
class ErrorEntry:
    memory_entry_id: str
    subtask_id: str
    error: str
    resolution: str
    created_at: int
    uid: str = ""


def decision_entry(note: Note) -> DecisionEntry:
    return DecisionEntry(note.memory_entry_id, note.text, note.subtask_id, note.created_at, note.uid)


def error_entry(note: Note) -> ErrorEntry:
    return ErrorEntry(note.memory_entry_id, note.subtask_id, note.text, note.resolution, note.created_at, note.uid)


@dataclasses.dataclass
class WorkspaceChanges:
    files_created: int
    files_modified: int
    last_change_at: int | None


@dataclasses.dataclass
class TaskStateView:
    task_id: str
    goal: str
    status: TaskStatus
    workspace: str
    plan_version: int
    last_replanned_at: int | None
    subtasks: list[Subtask]
    total_subtasks: int
    completed_count: int
    decisions: list[DecisionEntry]  # oldest first, as a log reads
    errors: list[ErrorEntry]  # oldest first
    workspace_changes: WorkspaceChanges | None
    collapsed: bool = False  # completed items are listed by id (completed_ids), not as subtasks
    show_plan_header: bool = True
    completed_ids: list[str] = dataclasses.field(default_factory=list)  # in plan order
    constraints: list[Note] = dataclasses.field(default_factory=list)  # oldest first
    questions: list[Note] = dataclasses.field(default_factory=list)
    risks: list[Note] = dataclasses.field(default_factory=list)
    waits: list[WaitNote] = dataclasses.field(default_factory=list)
    conflicts: list[OpenConflict[Note]] = dataclasses.field(default_factory=list)  # oldest first
    settle_hint: bool = True  # the comment on open_conflicts saying how to settle one
    # (holder, item id) of each claimed item (ClaimPlanItem), in plan order: `current` in the YAML
    holders: list[tuple[str, str]] = dataclasses.field(default_factory=list)
    # "may be finished" questions on plan items (core/plan_inference), in plan order: `may_be_finished`
    asked: list[AskedStep] = dataclasses.field(default_factory=list)
    answer_hint: bool = True  # the comment on may_be_finished saying how to answer one


@dataclasses.dataclass
class AskedStep:
    subtask_id: str
    question: str  # "may be finished: step 3 'Book the venue' (message msg_…)"
    evidence: str


def ready_items(items: list[PlanItem]) -> list[PlanItem]:
    """PENDING items whose dependencies are all done, in plan order: what can be done next."""
    by_id = {item.id: item for item in items}
    return [item for item in items if item.status is ItemStatus.PENDING
            and all(by_id[d].status in DONE for d in item.depends_on if d in by_id)]


def next_items(items: list[PlanItem], count: int = NEXT_PENDING) -> list[PlanItem]:
    """The next `count` pending items: the ready ones first, then the next pending ones in plan order."""
    ready = ready_items(items)[:count]
    chosen = {item.id for item in ready}
    rest = [item for item in items if item.status is ItemStatus.PENDING and item.id not in chosen]
    return ready + rest[:count - len(ready)]


def _shorter(notes: list[Note], limit: int) -> list[Note]:
    """The newest `limit` notes (oldest first), each text cut to NOTE_CHARS."""
    return [dataclasses.replace(n, text=n.text if len(n.text) <= NOTE_CHARS else n.text[:NOTE_CHARS - 1] + "…")
            for n in notes[-limit:]] if limit else []


def _shorter_conflicts(conflicts: list[OpenConflict[Note]]) -> list[OpenConflict[Note]]:
    """The newest MAX_CONFLICTS open conflicts, each side's text cut to NOTE_CHARS."""
    return [OpenConflict(tuple(_shorter(list(c.items), len(c.items)))) for c in conflicts[-MAX_CONFLICTS:]]


def build_task_state(task: Task, plan: Plan | None, newest_decisions: list[DecisionEntry],
                     newest_errors: list[ErrorEntry], workspace: WorkspaceChanges | None, *,
                     constraints: Sequence[Note] = (), questions: Sequence[Note] = (), risks: Sequence[Note] = (),
                     waits: Sequence[WaitNote] = (), conflicts: Sequence[OpenConflict[Note]] = ()) -> TaskStateView:
    """Apply the size rules. Decisions and errors come newest first (as queried); constraints,
    questions, risks, waits and open conflicts oldest first (as core/state_notes lists them)."""
    items = plan.items if plan else []
    completed = sum(1 for item in items if item.status in DONE)
    shown = items
    collapsed = len(items) > COLLAPSE_OVER
    completed_ids: list[str] = []
    if collapsed:
        working = [item for item in items if item.status in (ItemStatus.IN_PROGRESS, ItemStatus.BLOCKED,
                                                              ItemStatus.FAILED)]
        keep = {item.id for item in working + next_items(items)}
        shown = [item for item in items if item.id in keep]
        completed_ids = [item.id for item in items if item.status in DONE]
    return TaskStateView(
        task_id=task.id, goal=task.goal or task.name, status=task.status, workspace=task.workspace,
        plan_version=plan.version if plan else 0, last_replanned_at=plan.created_at if plan else None,
        subtasks=[Subtask(i.id, i.status, i.summary[:SUMMARY_CHARS], i.active_issue, list(i.depends_on))
                  for i in shown],
        total_subtasks=len(items), completed_count=completed,
        decisions=list(reversed(newest_decisions[:MAX_DECISIONS])),
        errors=list(reversed(newest_errors[:MAX_ERRORS])),
        workspace_changes=workspace if workspace and (workspace.files_created or workspace.files_modified) else None,
        collapsed=collapsed, completed_ids=completed_ids,
        constraints=_shorter(list(constraints), MAX_NOTES), questions=_shorter(list(questions), MAX_NOTES),
        risks=_shorter(list(risks), MAX_NOTES), waits=list(waits)[-MAX_WAITS:],
        conflicts=_shorter_conflicts(list(conflicts)),
        holders=[(claim.holder, claim.item_id) for claim in (plan.claims if plan else [])],
        asked=[AskedStep(i.id, i.question.text(i), i.question.evidence[:NOTE_CHARS]) for i in items if i.question],
    )


# --- YAML -------------------------------------------------------------------------------------

_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9._-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(text: str) -> str:
    """A plain scalar when it cannot be misread, else a JSON string (valid YAML double-quoted)."""
    if _PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return json.dumps(text, ensure_ascii=False)


# Characters YAML does not allow unescaped (its printable set is tab, newlines, 0x20-0x7E, 0x85, 0xA0 up).
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")


def _text(text: str) -> str:
    """A JSON string is a YAML double-quoted scalar once the characters YAML cannot print are escaped."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def format_time(us: int) -> str:
    return datetime.datetime.fromtimestamp(us // 1_000_000, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_word(status: ItemStatus | TaskStatus) -> str:
    """TASK_STATUS_EXECUTING → executing, PLAN_ITEM_STATUS_IN_PROGRESS → in_progress."""
    prefix = "TASK_STATUS_" if isinstance(status, TaskStatus) else "PLAN_ITEM_STATUS_"
    return status.value.removeprefix(prefix).lower()


def render_task_state_yaml(view: TaskStateView) -> str:
    lines = ["task:", f"  id: {_scalar(view.task_id)}"]
    if view.goal:
        lines.append(f"  goal: {_text(view.goal)}")
    lines.append(f"  status: {status_word(view.status)}")
    if view.workspace:
        lines.append(f"  workspace: {_text(view.workspace)}")
    hidden = view.total_subtasks - len(view.subtasks)
    if view.plan_version and (view.show_plan_header or hidden or view.completed_ids):
        lines.append("plan:")
        if view.show_plan_header:
            lines.append(f"  version: {view.plan_version}")
            if view.last_replanned_at is not None:
                lines.append(f"  last_replanned: {_text(format_time(view.last_replanned_at))}")
        if hidden:
            progress = f"{view.completed_count}/{view.total_subtasks} completed, {len(view.subtasks)} shown"
            lines.append(f"  progress: {_text(progress)}")
        if view.completed_ids:
            lines.append(f"  completed: [{', '.join(_scalar(i) for i in view.completed_ids)}]")
    if view.holders:
        lines.append("current:  # who holds which subtask (ClaimPlanItem)")
        lines.extend(f"  - {{holder: {_scalar(holder)}, subtask: {_scalar(item)}}}" for holder, item in view.holders)
    if view.subtasks:
        lines.append("subtasks:")
        for s in view.subtasks:
            lines.append(f"  - id: {_scalar(s.id)}")
            lines.append(f"    status: {status_word(s.status)}")
            if s.summary:
                lines.append(f"    summary: {_text(s.summary)}")
            if s.active_issue:
                lines.append(f"    active_issue: {_text(s.active_issue)}")
            if s.depends_on:
                lines.append(f"    depends_on: [{', '.join(_scalar(d) for d in s.depends_on)}]")
    if view.asked:
        lines.append("may_be_finished:" + (f"  # {ANSWER_HINT}" if view.answer_hint else ""))
        for a in view.asked:
            lines.append(f"  - subtask: {_scalar(a.subtask_id)}")
            lines.append(f"    question: {_text(a.question)}")
            if a.evidence:
                lines.append(f"    evidence: {_text(a.evidence)}")
    if view.conflicts:
        lines.append("open_conflicts:" + (f"  # {SETTLE_HINT}" if view.settle_hint else ""))
        for conflict in view.conflicts:
            lines.append(f"  - question: {_text(conflict.question())}")
            lines.append(f"    uids: [{', '.join(_scalar(uid) for uid in conflict.uids)}]")
    if view.decisions:
        lines.append("decisions_log:")  # active decisions only: a superseded one is never listed
        lines.extend(f"  - {_text(d.text)}" for d in view.decisions)
    for key, notes in (("constraints", view.constraints), ("open_questions", view.questions),
                       ("open_risks", view.risks)):
        if notes:
            lines.append(f"{key}:")
            lines.extend(f"  - {_text(n.text)}" for n in notes)
    if view.waits:
        lines.append("open_waits:")
        for w in view.waits:
            lines.append(f"  - id: {_scalar(w.id)}")
            lines.append(f"    kind: {w.kind}")
            if w.person is not None:  # who must answer what
                lines.append(f"    needs: {'auth' if w.person.kind is ExternalKind.AUTH else 'input'}")
                lines.append(f"    from: {_text(w.person.resolver or 'a person')}")
                lines.append(f"    question: {_text(w.person.question)}")
                if w.person.plan_item_id:
                    lines.append(f"    subtask: {_scalar(w.person.plan_item_id)}")
            else:
                lines.append(f"    criteria: {_text(w.criteria)}")
            lines.append(f"    since: {_text(format_time(w.since))}")
            if w.timeout_us is not None:
                lines.append(f"    timeout: {_text(format_duration(w.timeout_us))}")
    if view.errors:
        lines.append("errors_encountered:")
        for e in view.errors:
            first = f"  - subtask: {_scalar(e.subtask_id)}" if e.subtask_id else None
            error = f"error: {_text(e.error)}"
            lines.append(first if first else f"  - {error}")
            if first:
                lines.append(f"    {error}")
            if e.resolution:
                lines.append(f"    resolution: {_text(e.resolution)}")
    w = view.workspace_changes
    if w is not None:
        lines.append("workspace_changes:")
        lines.append(f"  files_created: {w.files_created}")
        lines.append(f"  files_modified: {w.files_modified}")
        if w.last_change_at is not None:
            lines.append(f"  last_change: {_text(format_time(w.last_change_at))}")
    return "\n".join(lines) + "\n"


# --- the budget fit ---------------------------------------------------------------------------
# Each step removes one unit of detail and returns True, or returns False when it has nothing left.

def _drop_workspace(v: TaskStateView) -> bool:
    had = v.workspace_changes is not None
    v.workspace_changes = None
    return had


def _drop_resolution(v: TaskStateView) -> bool:
    for e in v.errors:
        if e.resolution:
            e.resolution = ""
            return True
    return False


def _drop_oldest(name: str) -> Callable[[TaskStateView], bool]:
    def drop(v: TaskStateView) -> bool:
        entries = getattr(v, name)
        if not entries:
            return False
        del entries[0]
        return True
    return drop


def _clear_subtask_field(field: str, which: Callable[[Subtask], bool]) -> Callable[[TaskStateView], bool]:
    def clear(v: TaskStateView) -> bool:
        for s in v.subtasks:
            if which(s) and getattr(s, field):
                setattr(s, field, type(getattr(s, field))())
                return True
        return False
    return clear


def _done(s: Subtask) -> bool:
    return s.status in DONE


def _pending(s: Subtask) -> bool:
    return s.status is ItemStatus.PENDING


def _keep_newest(name: str, keep: int) -> Callable[[TaskStateView], bool]:
    def drop(v: TaskStateView) -> bool:
        entries = getattr(v, name)
        if len(entries) <= keep:
            return False
        del entries[0]
        return True
    return drop


def _completed_subtask_to_id(v: TaskStateView) -> bool:
    """A completed subtask shown in full becomes an id in plan.completed (its id is kept)."""
    for index, s in enumerate(v.subtasks):
        if _done(s):
            del v.subtasks[index]
            v.completed_ids.append(s.id)
            return True
    return False


def _drop_pending_beyond_next(v: TaskStateView) -> bool:
    """A pending subtask past the first NEXT_PENDING pending ones, last first."""
    pending = [index for index, s in enumerate(v.subtasks) if _pending(s)]
    if len(pending) <= NEXT_PENDING:
        return False
    del v.subtasks[pending[-1]]
    return True


def _drop_last_pending(v: TaskStateView) -> bool:
    for index in range(len(v.subtasks) - 1, -1, -1):
        if _pending(v.subtasks[index]):
            del v.subtasks[index]
            return True
    return False


def _drop_current_last(v: TaskStateView) -> bool:
    """Any subtask, the in-progress ones last."""
    if not v.subtasks:
        return False
    others = [index for index, s in enumerate(v.subtasks) if s.status is not ItemStatus.IN_PROGRESS]
    del v.subtasks[others[-1] if others else len(v.subtasks) - 1]
    return True


def _drop_last(name: str) -> Callable[[TaskStateView], bool]:
    def drop(v: TaskStateView) -> bool:
        entries = getattr(v, name)
        if not entries:
            return False
        entries.pop()
        return True
    return drop


def _drop_plan_header(v: TaskStateView) -> bool:
    had = v.show_plan_header and v.plan_version > 0
    v.show_plan_header = False
    return had


def _drop_answer_hint(v: TaskStateView) -> bool:
    had = v.answer_hint and bool(v.asked)
    v.answer_hint = False
    return had


def _drop_evidence(v: TaskStateView) -> bool:
    for a in v.asked:
        if a.evidence:
            a.evidence = ""
            return True
    return False


def _drop_settle_hint(v: TaskStateView) -> bool:
    had = v.settle_hint and bool(v.conflicts)
    v.settle_hint = False
    return had


def _drop_workspace_path(v: TaskStateView) -> bool:
    had = bool(v.workspace)
    v.workspace = ""
    return had


# (label, step) in the order detail is given up; GetTaskState's documentation lists the same order.
# What an agent needs to resume goes last: the current item, the next ready ones, the active
# decisions, constraints, open questions and waits, the last error, then the completed ids.
DROP_ORDER: list[tuple[str, Callable[[TaskStateView], bool]]] = [
    ("workspace_changes", _drop_workspace),
    ("error resolutions", _drop_resolution),
    ("summaries of completed subtasks", _clear_subtask_field("summary", _done)),
    ("active issues of completed subtasks", _clear_subtask_field("active_issue", _done)),
    ("depends_on lists", _clear_subtask_field("depends_on", lambda s: True)),
    ("summaries of pending subtasks", _clear_subtask_field("summary", _pending)),
    ("completed subtasks listed by id", _completed_subtask_to_id),
    ("pending subtasks past the next three", _drop_pending_beyond_next),
    ("older errors", _keep_newest("errors", 1)),
    ("plan header", _drop_plan_header),
    ("how to settle a conflict", _drop_settle_hint),
    ("how to answer a may-be-finished question", _drop_answer_hint),
    ("evidence of may-be-finished questions", _drop_evidence),
    ("workspace path", _drop_workspace_path),
    ("oldest open risks", _drop_oldest("risks")),
    ("oldest completed ids", _drop_oldest("completed_ids")),
    ("oldest decisions", _keep_newest("decisions", 1)),
    ("oldest constraints", _keep_newest("constraints", 1)),
    ("oldest open questions", _keep_newest("questions", 1)),
    ("oldest open conflicts", _keep_newest("conflicts", 1)),
    ("oldest may-be-finished questions", _keep_newest("asked", 1)),
    ("oldest open waits", _keep_newest("waits", 1)),
    ("pending subtasks", _drop_last_pending),
    ("remaining subtask summaries", _clear_subtask_field("summary", lambda s: True)),
    ("remaining active issues", _clear_subtask_field("active_issue", lambda s: True)),
    ("last error", _drop_oldest("errors")),
    ("last decision", _drop_oldest("decisions")),
    ("last constraint", _drop_oldest("constraints")),
    ("last open question", _drop_oldest("questions")),
    ("last open conflict", _drop_oldest("conflicts")),
    ("last may-be-finished question", _drop_oldest("asked")),
    ("last open wait", _drop_oldest("waits")),
    ("held subtasks, the last first", _drop_last("holders")),
    ("remaining subtasks", _drop_current_last),
]


def fit_task_state(view: TaskStateView, counter: TokenCounter, budget: int) -> tuple[str, TaskStateView, list[str]]:
    """The YAML within budget tokens, the view it renders, and what was dropped ("3 × oldest decisions")."""
    view = _copy(view)
    omitted: list[str] = []
    text = render_task_state_yaml(view)
    tokens = counter.count(text)  # counted once per rendering: it is the costly part of a fit
    for label, step in DROP_ORDER:
        if tokens <= budget:
            return text, view, omitted
        # Remove units in growing batches: one render per batch keeps a big overshoot cheap.
        dropped, batch = 0, 1
        while tokens > budget:
            removed = 0
            while removed < batch and step(view):
                removed += 1
            if removed == 0:
                break
            dropped += removed
            batch *= 2
            text = render_task_state_yaml(view)
            tokens = counter.count(text)
        if dropped:
            omitted.append(label if dropped == 1 and label in _SINGLE else f"{dropped} × {label}")
    if tokens <= budget:
        return text, view, omitted
    return _fit_goal(view, counter, budget, omitted)


_SINGLE = {"workspace_changes", "plan header", "how to settle a conflict", "workspace path", "last error",
           "how to answer a may-be-finished question", "last may-be-finished question",
           "last decision", "last constraint", "last open question", "last open conflict", "last open wait"}


def _fit_goal(view: TaskStateView, counter: TokenCounter, budget: int,
              omitted: list[str]) -> tuple[str, TaskStateView, list[str]]:
    """Last resort: shorten the goal, then drop it; "" when not even the task id and status fit."""
    goal = view.goal
    view.goal = ""
    bare = render_task_state_yaml(view)
    if counter.count(bare) > budget:
        return "", view, [*omitted, "goal", "everything (budget too small for the task line)"]
    room = budget - counter.count(bare) - 4  # "  goal: " and quotes
    while room > 0:
        view.goal = counter.cut(goal, room)
        text = render_task_state_yaml(view)
        if view.goal and counter.count(text) <= budget:
            return text, view, [*omitted, "goal shortened"]
        room -= 2
    view.goal = ""
    return bare, view, [*omitted, "goal"]


Fitted = tuple[str, TaskStateView, list[str]]


class TaskStateFits:
    """fit_task_state, remembered by the view's whole content and the budget.

    GetTaskState and BuildContext fit a freshly read view on every call, and fitting a long plan
    renders and counts the YAML dozens of times (most of BuildContext's time), while between writes
    the view is the same. The key is the view's repr, which spells out every field recursively, so
    a view that differs in anything is fitted afresh: nothing needs invalidating, nothing stale is
    ever returned, and the budget guarantee is fit_task_state's own."""

    def __init__(self, counter: TokenCounter, capacity: int = 128) -> None:
        self._counter = counter
        self._capacity = capacity
        self._fitted: collections.OrderedDict[tuple[int, str], Fitted] = collections.OrderedDict()

    def fit(self, view: TaskStateView, budget: int) -> Fitted:
        key = (budget, repr(view))
        fitted = self._fitted.get(key)
        if fitted is None:
            fitted = fit_task_state(view, self._counter, budget)
            self._fitted[key] = fitted
            if len(self._fitted) > self._capacity:
                self._fitted.popitem(last=False)
        else:
            self._fitted.move_to_end(key)
        text, fitted_view, omitted = fitted
        return text, _copy(fitted_view), list(omitted)  # callers may change what they are given


def _copy(view: TaskStateView) -> TaskStateView:
    return dataclasses.replace(
        view, subtasks=[dataclasses.replace(s, depends_on=list(s.depends_on)) for s in view.subtasks],
        decisions=list(view.decisions), errors=[dataclasses.replace(e) for e in view.errors],
        completed_ids=list(view.completed_ids), constraints=list(view.constraints), questions=list(view.questions),
        risks=list(view.risks), waits=list(view.waits), conflicts=list(view.conflicts), holders=list(view.holders))
