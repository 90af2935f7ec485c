"""Tasks, plans, actions, messages, snapshots, events and progress → protobuf messages and their proto-JSON
form; the Timestamp/Duration/Struct helpers the other converters share."""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2

from taskmem.api.validate import STRUCT_MAX_DEPTH
from taskmem.core.actions import Action, ActionLogLine
from taskmem.core.claims import Claim, ClaimEvent
from taskmem.core.events import Event
from taskmem.core.messages import ContextSnapshot, Message, SessionItem
from taskmem.core.model_usage import TaskUsage
from taskmem.core.open_conflicts import OpenConflict
from taskmem.core.plans import Plan, PlanItem, StatusSource
from taskmem.core.progress import Progress
from taskmem.core.state_notes import Note, WaitNote
from taskmem.core.tasks import Task
from taskmem.core.webhooks import Delivery
from taskmem.v1 import event_pb2, state_pb2, task_pb2, task_service_pb2, webhook_pb2


def timestamp(us: int | None) -> timestamp_pb2.Timestamp | None:
    if us is None:
        return None
    return timestamp_pb2.Timestamp(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


def duration(us: int | None) -> duration_pb2.Duration | None:
    if us is None:
        return None
    return duration_pb2.Duration(seconds=us // 1_000_000, nanos=(us % 1_000_000) * 1000)


# A stored JSON value reaches a reply with at most this many levels of objects and lists, the field's own
# object counting 1: the depth writes accept (validate.STRUCT_MAX_DEPTH), so what a client reads it can
# write back. A database written before writes were limited may hold deeper values; past the limit a
# reply would outgrow protobuf's 100 message levels (three per JSON object) and the read fail INTERNAL,
# so the conversion cuts them there and leaves a marker string (see within_depth).
READ_MAX_DEPTH = STRUCT_MAX_DEPTH
# An event's payload holds a resource whose Struct fields sit up to three levels down (a plan item's
# input at payload.items[i].input, a wait's payload_value at payload.target.event.payload_value), so a
# payload may reach three levels more than a field; still 30 message levels inside protobuf's limit.
EVENT_PAYLOAD_MAX_DEPTH = STRUCT_MAX_DEPTH + 3


def within_depth(value: Any, levels: int) -> Any:
    """value (JSON data) with at most `levels` levels of objects and lists, value's own object or list
    counting 1: each object or list past them is replaced by the string
    "…(nested deeper than N levels: cut on read)". value itself when it is within (the normal case: one
    walk over its objects and lists, nothing copied)."""
    if not isinstance(value, dict | list) or _fits(value, levels):
        return value
    return _cut(value, levels, f"…(nested deeper than {levels} levels: cut on read)")


def _fits(value: dict[str, Any] | list[Any], room: int) -> bool:
    """Whether value (an object or list) and everything in it opens at most `room` levels."""
    if room == 0:
        return False
    room -= 1
    for item in value.values() if type(value) is dict else value:
        kind = type(item)
        if (kind is dict or kind is list) and not _fits(item, room):
            return False
    return True


def _cut(value: Any, room: int, marker: str) -> Any:
    if isinstance(value, dict):
        return {key: _cut(item, room - 1, marker) for key, item in value.items()} if room else marker
    if isinstance(value, list):
        return [_cut(item, room - 1, marker) for item in value] if room else marker
    return value


def struct(value: dict[str, Any], levels: int = READ_MAX_DEPTH) -> struct_pb2.Struct | None:
    """A stored JSON object as a Struct for a reply, cut at `levels` levels (see within_depth)."""
    if not value:
        return None
    message = struct_pb2.Struct()
    message.update(within_depth(value, levels))
    return message


def task(t: Task) -> task_pb2.Task:
    return task_pb2.Task(
        id=t.id, namespace=t.namespace, name=t.name, goal=t.goal, status=t.status.value, workspace=t.workspace,
        context=struct(t.context), metadata=struct(t.metadata), approval_mode=t.approval_mode.value,
        callback_url=t.callback_url, final_answer=t.final_answer,
        error_summary=task_pb2.ErrorSummary(**dataclasses.asdict(t.error_summary)) if t.error_summary.message
        or t.error_summary.failed_stage or t.error_summary.failed_step else None,
        plan_version=t.plan_version, etag=t.etag, create_time=timestamp(t.created_at),
        plan_generate_time=timestamp(t.plan_generated_at), execution_start_time=timestamp(t.execution_started_at),
        synthesis_start_time=timestamp(t.synthesis_started_at), complete_time=timestamp(t.completed_at),
        update_time=timestamp(t.updated_at), pause_time=timestamp(t.paused_at),
        archive_time=timestamp(t.archived_at), plan_inference_disabled=t.plan_inference_disabled,
        webhook_event_types=t.webhook_event_types, forked_from=t.forked_from, forked_at=t.forked_at,
    )


def webhook_delivery(d: Delivery) -> webhook_pb2.WebhookDelivery:
    return webhook_pb2.WebhookDelivery(
        task_id=d.task_id, cursor=d.cursor, event_type=d.event_type, url=d.url, state=d.state, attempts=d.attempts,
        last_status_code=d.last_status_code, last_error=d.last_error,
        first_attempt_time=timestamp(d.first_attempt_at), last_attempt_time=timestamp(d.last_attempt_at),
        next_attempt_time=timestamp(d.next_attempt_at),
    )


def plan_item(item: PlanItem) -> task_pb2.PlanItem:
    return task_pb2.PlanItem(
        id=item.id, ordinal=item.ordinal, stage=item.stage, title=item.title, status=item.status.value,
        summary=item.summary, active_issue=item.active_issue, depends_on=item.depends_on,
        tool_name=item.tool_name, input=struct(item.input), narrative=item.narrative,
        start_time=timestamp(item.started_at), complete_time=timestamp(item.completed_at),
        duration=duration(item.duration_us), status_source=item.status_source.value,
        status_message_id=item.status_message_id, holder_id=item.holder_id, question=step_question(item),
    )


def step_question(item: PlanItem) -> task_pb2.PlanItemQuestion | None:
    """The item's open "may be finished" question, or None."""
    q = item.question
    if q is None:
        return None
    return task_pb2.PlanItemQuestion(item_id=item.id, message_id=q.message_id, question=q.text(item),
                                     evidence=q.evidence, reason=q.reason)


def claim(c: Claim) -> task_pb2.PlanItemClaim:
    return task_pb2.PlanItemClaim(task_id=c.task_id, item_id=c.item_id, holder_id=c.holder,
                                  claim_time=timestamp(c.claimed_at), expire_time=timestamp(c.expires_at))


def plan(p: Plan | None) -> task_pb2.Plan | None:
    if p is None:
        return None
    return task_pb2.Plan(task_id=p.task_id, version=p.version, items=[plan_item(i) for i in p.items],
                         reason=p.reason, create_time=timestamp(p.created_at))


def action(a: Action) -> task_pb2.Action:
    return task_pb2.Action(
        id=a.id, task_id=a.task_id, plan_item_id=a.plan_item_id, type=a.type.value, tool_name=a.tool_name,
        summary=a.summary, status=a.status.value, input=struct(a.input), output=struct(a.output), error=a.error,
        duration=duration(a.duration_us), tokens_in=a.tokens_in, tokens_out=a.tokens_out,
        create_time=timestamp(a.created_at), complete_time=timestamp(a.completed_at),
    )


def log_line(line: ActionLogLine) -> task_pb2.ActionLogLine:
    return task_pb2.ActionLogLine(action_id=line.action_id, sequence=line.sequence, stream=line.stream,
                                  content=line.content, create_time=timestamp(line.created_at))


def message(m: Message) -> task_pb2.Message:
    return task_pb2.Message(id=m.id, task_id=m.task_id, thread_id=m.thread_id, role=m.role.value,
                            kind=m.kind.value, content=m.content, create_time=timestamp(m.created_at),
                            expire_time=timestamp(m.expires_at))


def snapshot(s: ContextSnapshot) -> task_pb2.ContextSnapshot:
    return task_pb2.ContextSnapshot(id=s.id, task_id=s.task_id, sequence=s.sequence, label=s.label,
                                    content=s.content, summarized=s.summarized, create_time=timestamp(s.created_at))


def event(e: Event) -> event_pb2.Event:
    return event_pb2.Event(cursor=e.cursor, type=e.type.value, task_id=e.task_id, correlation_id=e.correlation_id,
                           payload=struct(e.payload, EVENT_PAYLOAD_MAX_DEPTH), create_time=timestamp(e.created_at),
                           expired=e.expired, key_id=e.key_id, agent_id=e.agent_id)


def progress(p: Progress) -> task_service_pb2.GetProgressResponse:
    return task_service_pb2.GetProgressResponse(
        task=task(p.task), plan_version=p.plan_version, total_items=p.total_items,
        completed=[completed_item(i) for i in p.completed], current=plan_item(p.current) if p.current else None,
        next=[outline_item(i) for i in p.next[:NEXT_LISTED]], blocked=[outline_item(i) for i in p.blocked],
        failed=[outline_item(i) for i in p.failed], last_error=p.last_error,
        recent_messages=[message(m) for m in p.recent_messages], summary=p.summary,
        decisions=[note(n) for n in p.decisions], constraints=[note(n) for n in p.constraints],
        open_questions=[note(n) for n in p.questions], open_waits=[open_wait(w) for w in p.waits],
        ready_count=len(p.next), open_conflicts=[conflict(c) for c in p.conflicts],
        claims=[claim(c) for c in p.claims], plan_item_questions=[step_question(i) for i in p.asked],
    )


# GetProgress lists at most this many ready items (ready_count counts them all): a long plan with few
# dependencies has dozens ready at once, and what to do next is the first few.
NEXT_LISTED = 10


def completed_item(item: PlanItem) -> task_pb2.PlanItem:
    """A done item as GetProgress lists it: enough to name it (GetPlan has the rest)."""
    return task_pb2.PlanItem(id=item.id, title=item.title, status=item.status.value)


def outline_item(item: PlanItem) -> task_pb2.PlanItem:
    """An item still to do as GetProgress lists it: what it is and what holds it (GetPlan has the rest)."""
    return task_pb2.PlanItem(id=item.id, title=item.title, status=item.status.value, summary=item.summary,
                             active_issue=item.active_issue, depends_on=item.depends_on, holder_id=item.holder_id,
                             question=step_question(item))


def note(n: Note) -> state_pb2.StateItemNote:
    return state_pb2.StateItemNote(uid=n.uid, text=n.text, create_time=timestamp(n.created_at), conflict=n.conflict)


def conflict(c: OpenConflict[Note]) -> state_pb2.StateConflict:
    return state_pb2.StateConflict(question=c.question(), items=[note(n) for n in c.items])


def open_wait(w: WaitNote) -> state_pb2.OpenWait:
    converted = state_pb2.OpenWait(wait_id=w.id, kind=w.kind, criteria=w.criteria, start_time=timestamp(w.since),
                                   timeout=duration(w.timeout_us))
    if w.person is not None:
        converted.external_kind = w.person.kind.value  # type: ignore[assignment]
        converted.resolver, converted.question, converted.plan_item_id = (
            w.person.resolver, w.person.question, w.person.plan_item_id)
    return converted


def _time_json(us: int | None) -> str | None:
    """RFC 3339 in UTC with microseconds, as proto JSON writes a Timestamp."""
    if us is None:
        return None
    seconds, micros = divmod(us, 1_000_000)
    return f"{_second_json(seconds)}.{micros:06d}Z"


@functools.lru_cache(maxsize=4096)
def _second_json(seconds: int) -> str:
    # Every event stamps a time; the writes of one second share this prefix (5× cheaper than datetime).
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def _duration_json(us: int | None) -> str | None:
    return None if us is None else f"{us // 1_000_000}.{us % 1_000_000:06d}s"


def _compact(fields: dict[str, Any]) -> dict[str, Any]:
    """Proto JSON leaves out fields at their default value."""
    return {key: value for key, value in fields.items() if value not in (None, "", 0, [], {}, False)}


def _task_json(t: Task) -> dict[str, Any]:
    return _compact({
        "id": t.id, "namespace": t.namespace, "name": t.name, "goal": t.goal, "status": t.status.value,
        "workspace": t.workspace, "context": t.context, "metadata": t.metadata,
        "approval_mode": t.approval_mode.value, "callback_url": t.callback_url, "final_answer": t.final_answer,
        "error_summary": _compact(dataclasses.asdict(t.error_summary)), "plan_version": t.plan_version,
        "etag": t.etag, "create_time": _time_json(t.created_at), "plan_generate_time": _time_json(t.plan_generated_at),
        "execution_start_time": _time_json(t.execution_started_at),
        "synthesis_start_time": _time_json(t.synthesis_started_at), "complete_time": _time_json(t.completed_at),
        "update_time": _time_json(t.updated_at), "pause_time": _time_json(t.paused_at),
        "archive_time": _time_json(t.archived_at), "plan_inference_disabled": t.plan_inference_disabled,
        "webhook_event_types": t.webhook_event_types, "forked_from": t.forked_from,
        "forked_at": str(t.forked_at) if t.forked_at else None,  # int64: a string in proto JSON
    })


def _item_json(i: PlanItem) -> dict[str, Any]:
    return _compact({
        "id": i.id, "ordinal": i.ordinal, "stage": i.stage, "title": i.title, "status": i.status.value,
        "summary": i.summary, "active_issue": i.active_issue, "depends_on": i.depends_on, "tool_name": i.tool_name,
        "input": i.input, "narrative": i.narrative, "start_time": _time_json(i.started_at),
        "complete_time": _time_json(i.completed_at), "duration": _duration_json(i.duration_us),
        "status_source": None if i.status_source is StatusSource.UNSPECIFIED else i.status_source.value,
        "status_message_id": i.status_message_id, "holder_id": i.holder_id,
    })


def _claim_json(c: Claim) -> dict[str, Any]:
    return _compact({"task_id": c.task_id, "item_id": c.item_id, "holder_id": c.holder,
                     "claim_time": _time_json(c.claimed_at), "expire_time": _time_json(c.expires_at)})


def _claim_event_json(e: ClaimEvent) -> dict[str, Any]:
    return {**_item_json(e.item), "plan_version": e.plan_version, "claim": _claim_json(e.claim)}


def _plan_json(p: Plan) -> dict[str, Any]:
    return _compact({"task_id": p.task_id, "version": p.version, "items": [_item_json(i) for i in p.items],
                     "reason": p.reason, "create_time": _time_json(p.created_at)})


def _action_json(a: Action) -> dict[str, Any]:
    return _compact({
        "id": a.id, "task_id": a.task_id, "plan_item_id": a.plan_item_id, "type": a.type.value,
        "tool_name": a.tool_name, "summary": a.summary, "status": a.status.value, "input": a.input,
        "output": a.output, "error": a.error, "duration": _duration_json(a.duration_us),
        "tokens_in": str(a.tokens_in) if a.tokens_in else None, "tokens_out": str(a.tokens_out) if a.tokens_out else None,
        "create_time": _time_json(a.created_at), "complete_time": _time_json(a.completed_at),
    })


def _message_json(m: Message) -> dict[str, Any]:
    return _compact({"id": m.id, "task_id": m.task_id, "thread_id": m.thread_id, "role": m.role.value,
                     "kind": m.kind.value, "content": m.content, "create_time": _time_json(m.created_at),
                     "expire_time": _time_json(m.expires_at)})


def _snapshot_json(s: ContextSnapshot) -> dict[str, Any]:
    return _compact({"id": s.id, "task_id": s.task_id, "sequence": s.sequence, "label": s.label,
                     "summarized": s.summarized, "create_time": _time_json(s.created_at)})


_TO_JSON: dict[type, Any] = {Task: _task_json, Plan: _plan_json, PlanItem: _item_json, Action: _action_json,
                             Message: _message_json, ContextSnapshot: _snapshot_json, ClaimEvent: _claim_event_json}


def event_json(e: Event) -> dict[str, Any]:
    """An Event in its proto JSON form (original field names), as json_format would write it, built
    directly: the webhook sender writes one per delivery. Its payload is cut as in event() (a receiver
    parsing it into an Event has protobuf's limits)."""
    return _compact({"cursor": str(e.cursor), "type": e.type.value, "task_id": e.task_id,
                     "correlation_id": e.correlation_id,
                     "payload": within_depth(e.payload, EVENT_PAYLOAD_MAX_DEPTH), "create_time": _time_json(e.created_at)})


def session_item(item: SessionItem) -> task_pb2.SessionItem:
    return task_pb2.SessionItem(message_id=item.message_id, item_json=item.item_json,
                                create_time=timestamp(item.created_at))


def resource_json(resource: Any) -> dict[str, Any]:
    """The proto JSON form (original field names) of a task, plan, item, action, message or snapshot, for
    an event's payload.

    Written out by hand rather than through json_format.MessageToDict, which is several
    times slower and sits on every write's path.
    """
    payload: dict[str, Any] = _TO_JSON[type(resource)](resource)
    return payload


def task_usage(usage: TaskUsage) -> task_service_pb2.GetTaskUsageResponse:
    lines = [task_pb2.ModelUsage(
        model=line.model, purpose=f"MODEL_CALL_PURPOSE_{line.purpose.value.upper()}" if line.purpose else 0,
        calls=line.calls, failed_calls=line.failed_calls, refused_calls=line.refused_calls, tokens_in=line.tokens_in,
        tokens_out=line.tokens_out, latency=duration(line.latency_us)) for line in usage.lines]
    budget = task_pb2.ModelBudget(limit_tokens=usage.budget.limit_tokens, used_tokens=usage.budget.used_tokens,
                                  exhausted=usage.budget.exhausted) if usage.budget is not None else None
    model_in, model_out = usage.model_tokens_in, usage.model_tokens_out
    return task_service_pb2.GetTaskUsageResponse(
        task_id=usage.task_id, model_usage=lines, model_tokens_in=model_in, model_tokens_out=model_out,
        agent_tokens_in=usage.agent_tokens_in, agent_tokens_out=usage.agent_tokens_out, actions=usage.actions,
        tokens_in=model_in + usage.agent_tokens_in, tokens_out=model_out + usage.agent_tokens_out,
        namespace_budget=budget)
