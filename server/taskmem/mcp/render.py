"""Compact text for a model: what each tool answers, rendered from the RPC responses."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from taskmem.commands.formatting import (display_time, is_set, one_line, plan_item_status_name, short_enum_name,
                                         task_status_name)
from google.protobuf import duration_pb2

from taskmem.core.waits import format_duration
from taskmem.v1 import memory_pb2, state_pb2, task_pb2, task_service_pb2, wait_pb2

# How many items of a list "where was I?" spells out before it counts the rest.
LISTED_ITEMS = 8


def item_label(item: task_pb2.PlanItem) -> str:
    label = item.id if item.title == item.id else f"{item.id} — {item.title}"
    return label + (f" ({one_line(item.summary, 100)})" if item.summary else "")


def _listed(items: Sequence[task_pb2.PlanItem]) -> str:
    shown = "; ".join(item_label(item) for item in items[:LISTED_ITEMS])
    return shown + (f"; … {len(items) - LISTED_ITEMS} more" if len(items) > LISTED_ITEMS else "")


def task_line(task: task_pb2.Task) -> str:
    return f"{task.id} [{task_status_name(task.status)}] {task.name}"


def registered(task: task_pb2.Task, plan: task_pb2.Plan | None) -> str:
    lines = [f"Registered task {task.id}: {task.name} ({task_status_name(task.status)})."]
    if plan is not None and plan.items:
        lines.append("Plan (refer to items by id in task_update):")
        lines.extend(f"  {item.id}. {item.title}" for item in plan.items)
    return "\n".join(lines)


def forked(answer: task_service_pb2.ForkTaskResponse) -> str:
    task = answer.task
    lines = [f"Forked {task.forked_from} at cursor {task.forked_at} into {task_line(task)}.",
             f"Use {task.id} for the alternative from now on; {task.forked_from} is unchanged."]
    if answer.HasField("plan"):
        lines.append(plan_text(answer.plan))
    return "\n".join(lines)


def claimed(answer: task_service_pb2.ClaimPlanItemResponse) -> str:
    """The item a task_claim took, or why there is none."""
    if not answer.HasField("item"):
        if answer.remaining_count == 0:
            return "Nothing left to claim: every matching item is done (or failed)."
        return (f"Nothing ready now: {answer.remaining_count} matching item(s) are held by other agents or wait on "
                "dependencies. Try again later.")
    item = answer.item
    lines = [f"Claimed {item_label(item)} for {answer.claim.holder_id} until {display_time(answer.claim.expire_time)}."]
    if item.depends_on:
        lines.append("Depends on (done): " + ", ".join(item.depends_on))
    if item.narrative:
        lines.append(f"Why: {one_line(item.narrative, 300)}")
    lines.append(f"Finish it with task_update(plan_item={item.id!r}, item_status='completed', "
                 f"holder={answer.claim.holder_id!r}).")
    return "\n".join(lines)


def _duration_text(duration: duration_pb2.Duration) -> str:
    return format_duration(duration.seconds * 1_000_000 + duration.nanos // 1_000)


def person_wait_line(wait: state_pb2.OpenWait) -> str:
    """Who must answer what: "  wai_… alex must answer: Which region? (for item deploy, since …)"."""
    verb = "authorise" if wait.external_kind == wait_pb2.EXTERNAL_WAIT_KIND_AUTH else "answer"
    item = f"for item {wait.plan_item_id}, " if wait.plan_item_id else ""
    return (f"  {wait.wait_id} {wait.resolver or 'a person'} must {verb}: {one_line(wait.question, 500)}"
            f" ({item}since {display_time(wait.start_time)})")


def open_wait_line(wait: state_pb2.OpenWait) -> str:
    line = f"  {wait.wait_id} ({wait.kind}) {one_line(wait.criteria, 200)}, since {display_time(wait.start_time)}"
    if wait.HasField("timeout"):
        line += f", times out after {_duration_text(wait.timeout)}"
    return line


def _notes(heading: str, notes: Sequence[state_pb2.StateItemNote]) -> list[str]:
    if not notes:
        return []
    return [f"{heading}:", *(f"  [{note.uid}] {one_line(note.text, 200)}" + (" (CONFLICT)" if note.conflict else "")
                             for note in notes)]


def _conflicts(conflicts: Sequence[state_pb2.StateConflict]) -> list[str]:
    if not conflicts:
        return []
    return ["Undecided — answer each with answer_question(task_id, new_uid=B, old_uid=A, answer=replaces |"
            " stands_beside | same):", *(f"  {_question_line(c)}" for c in conflicts)]


def _question_line(conflict: state_pb2.StateConflict) -> str:
    b, older = conflict.items[-1], conflict.items[:-1]
    pairs = ", ".join(f"new_uid={b.uid} old_uid={a.uid}" for a in older)
    return f"{one_line(conflict.question, 500)} ({pairs})"


def open_questions(conflicts: Sequence[state_pb2.StateConflict]) -> str:
    """The task's open questions, one line each with the uids answer_question takes, or that there are none."""
    return "\n".join(_conflicts(conflicts)) or "No open questions."


def answered(answer: str, items: Sequence[state_pb2.StateItem]) -> str:
    retired = [item.uid for item in items if item.status == state_pb2.STATE_ITEM_STATUS_SUPERSEDED]
    return f"Answered {answer}." + (f" Retired: {', '.join(retired)}." if retired else " Both items hold.")


def where_was_i(progress: task_service_pb2.GetProgressResponse, answer: str, from_model: bool,
                items: Iterable[state_pb2.StateItem]) -> str:
    """The task, its completed / current / next items, the open conflicts (each one question), the
    active decisions, constraints, open questions and open waits (GetProgress: the task's one
    reconciled state), open risks and actions (`items`; those in an open conflict are in its
    question), the last error and the newest messages: what a model needs after compaction."""
    task = progress.task
    lines = [f"Task {task.id}: {task.name} — {task_status_name(task.status)}"
             + (f", plan v{progress.plan_version}: {len(progress.completed)}/{progress.total_items} done"
                if progress.total_items else ", no plan yet")]
    if from_model and answer:
        lines.append(f"Answer: {answer}")
    lines.append("Completed: " + (_listed(progress.completed) if progress.completed else "none"))
    if progress.HasField("current"):
        current = progress.current
        lines.append(f"Current: {item_label(current)}"
                     + (f" — issue: {current.active_issue}" if current.active_issue else ""))
    else:
        lines.append("Current: none in progress")
    if progress.claims:
        shown = progress.claims[:LISTED_ITEMS]
        lines.append("Held: " + "; ".join(f"{c.item_id} by {c.holder_id} until {display_time(c.expire_time)}"
                                          for c in shown)
                     + (f"; … {len(progress.claims) - LISTED_ITEMS} more" if len(progress.claims) > LISTED_ITEMS else ""))
    if progress.next:
        lines.append("Next: " + _listed(progress.next))
    if progress.blocked:
        lines.append("Blocked: " + _listed(progress.blocked))
    if progress.failed:
        lines.append("Failed: " + _listed(progress.failed))
    if progress.plan_item_questions:
        lines.append("May be finished — answer each with task_update(plan_item=…, item_status='completed') if it is,"
                     " or dismiss_question=true if not:")
        lines.extend(f"  {one_line(q.question, 300)}: {one_line(q.evidence, 200)!r}"
                     for q in progress.plan_item_questions)
    lines += _conflicts(progress.open_conflicts)
    lines += _notes("Decisions", progress.decisions)
    lines += _notes("Constraints", progress.constraints)
    lines += _notes("Open questions", progress.open_questions)
    people = [wait for wait in progress.open_waits if wait.external_kind]
    if people:
        lines.append("Waiting on a person (their answer comes as a USER message in the history):")
        lines.extend(person_wait_line(wait) for wait in people)
    others = [wait for wait in progress.open_waits if not wait.external_kind]
    if others:
        lines.append("Open waits:")
        lines.extend(open_wait_line(wait) for wait in others)
    asked = {note.uid for conflict in progress.open_conflicts for note in conflict.items}
    by_type: dict[int, list[state_pb2.StateItem]] = {}
    for item in items:
        if item.uid not in asked:
            by_type.setdefault(item.type, []).append(item)
    for item_type, heading in ((state_pb2.STATE_ITEM_TYPE_RISK, "Risks"),
                               (state_pb2.STATE_ITEM_TYPE_ACTION, "Open actions")):
        lines += _notes(heading, [state_pb2.StateItemNote(uid=item.uid, text=item.text,
                                                          conflict=item.conflict and not item.conflict_with)
                                  for item in by_type.get(item_type, [])])
    if progress.last_error:
        lines.append(f"Last error: {one_line(progress.last_error, 300)}")
    if progress.recent_messages:
        lines.append("Recent messages:")
        for message in progress.recent_messages:
            role = short_enum_name(task_pb2.MessageRole, message.role, "MESSAGE_ROLE_")
            lines.append(f"  {display_time(message.create_time)} {role}: {one_line(message.content, 200)}")
    return "\n".join(lines)


def is_current(item: state_pb2.StateItem) -> bool:
    """Shown as current: not superseded, and not a done action or an answered question."""
    return item.status not in (state_pb2.STATE_ITEM_STATUS_SUPERSEDED, state_pb2.STATE_ITEM_STATUS_DONE,
                               state_pb2.STATE_ITEM_STATUS_ANSWERED)


def recorded_state(result: state_pb2.CandidateResult, replaced: str) -> str:
    outcome = short_enum_name(state_pb2.ReconcileOutcome, result.outcome, "RECONCILE_OUTCOME_")
    line = f"Recorded [{result.uid}] ({outcome}"
    if result.target_uid and result.outcome != state_pb2.RECONCILE_OUTCOME_INSERTED:
        line += f" with {result.target_uid}"
    line += ")."
    retired = replaced or (result.target_uid if result.outcome == state_pb2.RECONCILE_OUTCOME_SUPERSEDED else "")
    if retired:
        line += f" {retired} is retired: no view shows it as current any more."
    if result.outcome == state_pb2.RECONCILE_OUTCOME_CONFLICTED and result.target_uid:
        line += (f" It is near [{result.target_uid}] and nothing certain says how they relate: does it replace"
                 f" [{result.target_uid}], stand beside it, or say the same? Both stay current, asked in every view,"
                 f" until you answer: answer_question(new_uid={result.uid}, old_uid={result.target_uid},"
                 f" answer=replaces | stands_beside | same).")
    return line


def wait_line(wait: wait_pb2.Wait) -> str:
    status = short_enum_name(wait_pb2.WaitStatus, wait.status, "WAIT_STATUS_")
    line = f"Wait {wait.id} [{status}] {wait.criteria}"
    if wait.task_id:
        line += f" (task {wait.task_id})"
    if wait.result:
        line += f" → {wait.result}"
    elif is_set(wait.deadline_time):
        line += f"; times out at {display_time(wait.deadline_time)}"
    return line


def search_hits(hits: Sequence[memory_pb2.MemorySearchHit]) -> str:
    if not hits:
        return "No memory matches."
    lines = []
    for hit in hits:
        entry = hit.entry
        kind = short_enum_name(memory_pb2.MemoryType, entry.type, "MEMORY_TYPE_")
        task = f" task {entry.task_id}" if entry.task_id else ""
        lines.append(f"{hit.score:.3f} {entry.id} {kind}{task}: {one_line(entry.summary, 200)}")
    return "\n".join(lines)


def knowledge_lines(entries: Sequence[memory_pb2.Knowledge]) -> str:
    if not entries:
        return "No knowledge matches."
    return "\n".join(
        f"{short_enum_name(memory_pb2.KnowledgeCategory, entry.category, 'KNOWLEDGE_CATEGORY_')}/{entry.key}"
        f" = {one_line(entry.value, 300)} (confidence {entry.confidence:.2f}, rev {entry.revision})"
        for entry in entries)


def plan_text(plan: task_pb2.Plan) -> str:
    lines = [f"Plan v{plan.version} of {plan.task_id}" + (f" ({plan.reason})" if plan.reason else "")]
    for item in plan.items:
        line = f"{item.id}. [{plan_item_status_name(item.status)}] {item.title}"
        if item.depends_on:
            line += f" (after {', '.join(item.depends_on)})"
        if item.summary:
            line += f" — {item.summary}"
        if item.active_issue:
            line += f" — issue: {item.active_issue}"
        lines.append(line)
    return "\n".join(lines)
