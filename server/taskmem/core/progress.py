"""The deterministic answer to "where was I?", computed from the plan, the record and the task's
reconciled state (active decisions, constraints, open questions, open waits, and the open conflicts
asked as questions: core/state_notes)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from taskmem.core.actions import Action
from taskmem.core.claims import Claim
from taskmem.core.messages import Message
from taskmem.core.open_conflicts import SETTLE_HINT, OpenConflict
from taskmem.core.plans import ANSWER_HINT, DONE, ItemStatus, Plan, PlanItem
from taskmem.core.state_notes import Note, StateNotes, WaitNote
from taskmem.core.tasks import Task
from taskmem.core.waits import ExternalKind, format_duration

# The summary names every completed id; the state lines are capped so that it stays a few hundred
# tokens for a long plan (the lists in the response carry everything).
SUMMARY_NOTES, SUMMARY_WAITS, SUMMARY_NOTE_CHARS, SUMMARY_NEXT, SUMMARY_HELD = 5, 3, 120, 3, 10


@dataclasses.dataclass
class Progress:
    task: Task
    plan_version: int
    total_items: int
    completed: list[PlanItem]
    current: PlanItem | None
    next: list[PlanItem]
    blocked: list[PlanItem]
    failed: list[PlanItem]
    last_error: str
    recent_messages: list[Message]
    summary: str
    decisions: list[Note] = dataclasses.field(default_factory=list)  # active ones, oldest first
    constraints: list[Note] = dataclasses.field(default_factory=list)
    questions: list[Note] = dataclasses.field(default_factory=list)  # open ones
    waits: list[WaitNote] = dataclasses.field(default_factory=list)  # open ones
    conflicts: list[OpenConflict[Note]] = dataclasses.field(default_factory=list)  # open ones, oldest first
    claims: list[Claim] = dataclasses.field(default_factory=list)  # who holds which item, in plan order
    asked: list[PlanItem] = dataclasses.field(default_factory=list)  # items with a "may be finished" question


def compute_progress(task: Task, plan: Plan | None, last_failed_action: Action | None,
                     recent_messages: list[Message], notes: StateNotes | None = None) -> Progress:
    items = plan.items if plan else []
    by_id = {item.id: item for item in items}
    completed = [item for item in items if item.status in DONE]
    in_progress = [item for item in items if item.status is ItemStatus.IN_PROGRESS]
    failed = [item for item in items if item.status is ItemStatus.FAILED]
    ready: list[PlanItem] = []
    blocked = [item for item in items if item.status is ItemStatus.BLOCKED]
    for item in items:
        if item.status is not ItemStatus.PENDING:
            continue
        dependencies = [by_id[d] for d in item.depends_on if d in by_id]
        if all(d.status in DONE for d in dependencies):
            ready.append(item)
        elif any(d.status in (ItemStatus.FAILED, ItemStatus.BLOCKED) for d in dependencies):
            blocked.append(item)
    blocked.sort(key=lambda item: item.ordinal)
    notes = notes or StateNotes()
    last_error = _last_error(task, last_failed_action, failed, notes.errors)
    current = in_progress[0] if in_progress else None
    claims = plan.claims if plan else []
    summary = render_progress_summary(len(items), completed, current, ready, blocked, last_error, claims)
    asked = [item for item in items if item.question is not None]
    state_lines = [*question_lines(asked), *render_state_lines(notes)]
    return Progress(
        task=task, plan_version=plan.version if plan else 0, total_items=len(items),
        completed=completed, current=current, next=ready, blocked=blocked, failed=failed,
        last_error=last_error, recent_messages=recent_messages,
        summary="\n".join([summary, *state_lines]), decisions=notes.decisions, constraints=notes.constraints,
        questions=notes.questions, waits=notes.waits, conflicts=notes.conflicts, claims=claims, asked=asked,
    )


def question_lines(asked: Sequence[PlanItem]) -> list[str]:
    """ "May be finished (answer: …): step 3 'Book the venue' (message msg_…)." for the open questions."""
    if not asked:
        return []
    shown = asked[:SUMMARY_NOTES]
    more = f" (+{len(asked) - len(shown)} more)" if len(asked) > len(shown) else ""
    texts = [item.question.text(item).removeprefix("may be finished: ") for item in shown if item.question]
    return [f"May be finished{more} ({ANSWER_HINT}): " + "; ".join(texts) + "."]


def _last_error(task: Task, action: Action | None, failed: list[PlanItem], errors: list[Note]) -> str:
    if task.error_summary.message:
        return task.error_summary.message
    recorded = errors[-1] if errors else None
    if action is not None and (recorded is None or recorded.created_at <= (action.completed_at or action.created_at)):
        return f"action {action.id} ({action.summary}): {action.error or 'failed'}"
    if recorded is not None:
        where = f" in {recorded.subtask_id}" if recorded.subtask_id else ""
        return f"{recorded.text}{where}" + (f" (resolved: {recorded.resolution})" if recorded.resolution else "")
    if failed:
        newest = max(failed, key=lambda item: item.completed_at or 0)
        return f"item {newest.id} ({newest.title}) failed" + (f": {newest.summary}" if newest.summary else "")
    return ""


def _label(item: PlanItem) -> str:
    return item.id if item.title == item.id else f"{item.id} — {item.title}"


def render_progress_summary(total: int, completed: list[PlanItem], current: PlanItem | None,
                            ready: list[PlanItem], blocked: list[PlanItem], last_error: str,
                            claims: Sequence[Claim] = ()) -> str:
    """A few lines for a prompt, e.g. "Completed 3/5: build, push, ssh. Current: pull — pull image."."""
    if total == 0:
        return "No plan yet." + (f" Last error: {last_error}" if last_error else "")
    lines = [f"Completed {len(completed)}/{total}" + (": " + ", ".join(i.id for i in completed) if completed else "") + "."]
    if current is not None:
        lines.append(f"Current: {_label(current)}." + (f" Issue: {current.active_issue}." if current.active_issue else ""))
    if claims:
        shown = claims[:SUMMARY_HELD]
        more = f" (+{len(claims) - len(shown)} more)" if len(claims) > len(shown) else ""
        lines.append(f"Held{more}: " + "; ".join(f"{c.item_id} by {c.holder}" for c in shown) + ".")
    if ready:
        more = f" (+{len(ready) - SUMMARY_NEXT} more ready)" if len(ready) > SUMMARY_NEXT else ""
        lines.append("Next: " + "; ".join(_label(i) for i in ready[:SUMMARY_NEXT]) + more + ".")
    if blocked:
        lines.append("Blocked: " + ", ".join(i.id for i in blocked) + ".")
    if last_error:
        lines.append(f"Last error: {last_error}")
    if len(completed) == total:
        lines.append("All items done.")
    return "\n".join(lines)


def _clip(text: str) -> str:
    return text if len(text) <= SUMMARY_NOTE_CHARS else text[:SUMMARY_NOTE_CHARS - 1] + "…"


def _listed(label: str, notes: list[Note]) -> list[str]:
    if not notes:
        return []
    shown = notes[-SUMMARY_NOTES:]
    more = f" (+{len(notes) - len(shown)} older)" if len(notes) > len(shown) else ""
    return [f"{label}{more}: " + "; ".join(_clip(n.text) for n in shown) + "."]


def _wait_line(w: WaitNote) -> str:
    timeout = f", times out after {format_duration(w.timeout_us)}" if w.timeout_us is not None else ""
    return f"{_clip(w.criteria)} ({w.kind}, {w.id}{timeout})"


def person_wait_line(w: WaitNote) -> str:
    """Who must answer what: 'alex must answer "Which region?" (for item deploy; wai_…)'."""
    assert w.person is not None
    verb = "authorise" if w.person.kind is ExternalKind.AUTH else "answer"
    item = f"for item {w.person.plan_item_id}; " if w.person.plan_item_id else ""
    return f"{w.person.resolver or 'a person'} must {verb} {_clip(w.person.question)!r} ({item}{w.id})"


def render_state_lines(notes: StateNotes) -> list[str]:
    """The reconciled state as summary lines: who must answer what (every wait on a person), open conflicts
    (each one question), active decisions, constraints, open questions, the other open waits."""
    people = [w for w in notes.waits if w.person is not None]
    others = [w for w in notes.waits if w.person is None]
    lines = [f"Waiting on a person: {'; '.join(person_wait_line(w) for w in people)}."] if people else []
    lines += [*_conflict_lines(notes.conflicts), *_listed("Decisions", notes.decisions),
              *_listed("Constraints", notes.constraints), *_listed("Open questions", notes.questions)]
    if others:
        shown = others[-SUMMARY_WAITS:]
        more = f" (+{len(others) - len(shown)} more)" if len(others) > len(shown) else ""
        lines.append(f"Waiting on{more}: " + "; ".join(_wait_line(w) for w in shown) + ".")
    return lines


def _conflict_lines(conflicts: list[OpenConflict[Note]]) -> list[str]:
    if not conflicts:
        return []
    shown = conflicts[-SUMMARY_NOTES:]
    more = f" (+{len(conflicts) - len(shown)} older)" if len(conflicts) > len(shown) else ""
    return [f"Undecided{more} ({SETTLE_HINT}): " + "; ".join(c.question(_clip) for c in shown) + "."]
