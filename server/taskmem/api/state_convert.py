"""StateService: domain objects ⇄ protobuf messages."""

from __future__ import annotations

import dataclasses
from typing import Any

from taskmem.api import task_convert
from taskmem.core.open_conflicts import settle_with
from taskmem.core.state_records import CandidateResult, ReconcileReport, StoredStateItem
from taskmem.core.state_items import Candidate
from taskmem.core.task_state_yaml import DecisionEntry, ErrorEntry, TaskStateView
from taskmem.core.valid_time import StateVersion
from taskmem.core.working_memory import WorkingMemory
from taskmem.state.engine import Reconciled, Stated
from taskmem.state.view_sections import decision_of, error_of
from taskmem.v1 import state_pb2, state_service_pb2, task_pb2

_TYPES = {t: f"STATE_ITEM_TYPE_{t.upper()}" for t in ("decision", "constraint", "action", "question", "risk")}
_STATUSES = {s: f"STATE_ITEM_STATUS_{s.upper()}"
             for s in ("active", "open", "blocked", "done", "answered", "superseded")}
_CONFIDENCES = {c: f"STATE_ITEM_CONFIDENCE_{c.upper()}" for c in ("low", "medium", "high")}
_SOURCES = {"extraction": "STATE_ITEM_SOURCE_EXTRACTION", "agent": "STATE_ITEM_SOURCE_AGENT"}
_SKIPS = {"no_new_messages": "EXTRACTION_SKIP_REASON_NO_NEW_MESSAGES",
          "no_user_message": "EXTRACTION_SKIP_REASON_NO_USER_MESSAGE",
          "model_budget_exhausted": "EXTRACTION_SKIP_REASON_MODEL_BUDGET_EXHAUSTED"}


def type_word(value: int) -> str:
    """A StateItemType wire value as the core's word ("" for UNSPECIFIED)."""
    return state_pb2.StateItemType.Name(value).removeprefix("STATE_ITEM_TYPE_").lower() if value else ""


def status_word(value: int) -> str:
    return state_pb2.StateItemStatus.Name(value).removeprefix("STATE_ITEM_STATUS_").lower() if value else ""


def confidence_word(value: int) -> str:
    return state_pb2.StateItemConfidence.Name(value).removeprefix("STATE_ITEM_CONFIDENCE_").lower() if value else ""


def evidence(value: dict[str, Any] | None) -> state_pb2.SupersessionEvidence | None:
    if not value:
        return None
    return state_pb2.SupersessionEvidence(
        trigger=str(value.get("trigger") or ""), ref_message_id=str(value.get("ref_msg_id") or value.get(
            "ref_message_id") or ""), candidate_uid=str(value.get("candidate_uid") or ""),
        similarity=float(value.get("similarity") or value.get("score") or 0.0),
        matched_by=str(value.get("matched_by") or value.get("method") or ""))


def state_item(item: StoredStateItem) -> state_pb2.StateItem:
    return state_pb2.StateItem(
        uid=item.uid, thread_id=item.thread_id, type=_TYPES[str(item.type_tag)], text=item.text,
        status=_STATUSES[item.status], confidence=_CONFIDENCES[str(item.confidence)], topic_tags=item.topic_tags,
        refs=item.refs, replaced_by=item.replaced_by or "", supersession_evidence=evidence(item.supersession_evidence),
        conflict=item.conflict, conflict_with=item.conflict_with, pinned=item.pinned,
        source=_SOURCES.get(item.source, "STATE_ITEM_SOURCE_UNSPECIFIED"),
        create_time=task_convert.timestamp(item.created_at), last_seen_time=task_convert.timestamp(item.last_seen_at),
        update_time=task_convert.timestamp(item.updated_at), valid_from=task_convert.timestamp(item.created_at),
        valid_to=task_convert.timestamp(item.valid_to))


def version(v: StateVersion) -> state_service_pb2.TaskStateVersion:
    return state_service_pb2.TaskStateVersion(cursor=v.cursor, create_time=task_convert.timestamp(v.created_at),
                                              change=v.change, correlation_id=v.correlation_id,
                                              key_id=v.key_id, agent_id=v.agent_id, description=v.description)


def candidate(c: state_pb2.StateItemCandidate) -> Candidate:
    """A wire candidate as the core's raw Candidate (validate_item judges it)."""
    return Candidate(type_tag=type_word(c.type), text=c.text, status=status_word(c.status),
                     confidence=confidence_word(c.confidence) or "medium", topic_tags=tuple(c.topic_tags),
                     refs=tuple(c.refs), supersedes=c.supersedes or None, conflict=c.conflict, source="agent")


def report(r: ReconcileReport) -> state_pb2.ReconcileReport:
    return state_pb2.ReconcileReport(
        extracted=r.extracted, inserted=r.count("inserted"), merged=r.count("merged"),
        superseded=r.count("superseded"), conflicted=r.count("conflicted"), dropped=r.count("dropped"),
        duration=task_convert.duration(r.duration_us), skipped_reason=_SKIPS.get(r.skipped_reason, 0),
        messages_read=r.messages_read, embedding_model=r.embedding_model,
        results=[candidate_result(x) for x in r.results])


def candidate_result(x: CandidateResult) -> state_pb2.CandidateResult:
    conflicted = x.outcome == "conflicted" and x.uid and x.target_uid
    return state_pb2.CandidateResult(
        uid=x.uid, text=x.text, outcome=f"RECONCILE_OUTCOME_{x.outcome.upper()}", target_uid=x.target_uid,
        similarity=x.similarity, reason=x.reason, settle_with=settle_with(x.uid, x.target_uid) if conflicted else "")


def task_state(v: TaskStateView) -> state_pb2.TaskState:
    w = v.workspace_changes
    return state_pb2.TaskState(
        task_id=v.task_id, goal=v.goal, status=v.status.value, workspace=v.workspace,
        plan_version=v.plan_version if v.show_plan_header else 0,
        last_replanned_time=task_convert.timestamp(v.last_replanned_at) if v.show_plan_header else None,
        subtasks=[state_pb2.TaskStateSubtask(id=s.id, status=task_pb2.PlanItemStatus.Value(s.status.value),
                                             summary=s.summary, active_issue=s.active_issue,
                                             depends_on=s.depends_on) for s in v.subtasks],
        total_subtasks=v.total_subtasks, completed_count=v.completed_count,
        decisions=[decision(d) for d in v.decisions], errors=[error(e) for e in v.errors],
        workspace_changes=state_pb2.WorkspaceChanges(
            files_created=w.files_created, files_modified=w.files_modified,
            last_change_time=task_convert.timestamp(w.last_change_at)) if w else None,
        completed_ids=v.completed_ids, constraints=[task_convert.note(n) for n in v.constraints],
        open_questions=[task_convert.note(n) for n in v.questions], open_risks=[task_convert.note(n) for n in v.risks],
        open_waits=[task_convert.open_wait(w) for w in v.waits],
        open_conflicts=[task_convert.conflict(c) for c in v.conflicts])


def working_memory(m: WorkingMemory) -> state_pb2.WorkingMemory:
    return state_pb2.WorkingMemory(
        agent_id=m.agent_id, current_plan=m.current_plan, active_constraints=m.active_constraints,
        task_context=task_convert.struct(m.task_context), scratchpad=m.scratchpad,
        update_time=task_convert.timestamp(m.updated_at) if m.revision else None, etag=m.etag)


def decision(d: DecisionEntry) -> state_pb2.TaskStateDecision:
    return state_pb2.TaskStateDecision(memory_entry_id=d.memory_entry_id, text=d.text, subtask_id=d.subtask_id,
                                       create_time=task_convert.timestamp(d.created_at), uid=d.uid)


def error(e: ErrorEntry) -> state_pb2.TaskStateError:
    return state_pb2.TaskStateError(memory_entry_id=e.memory_entry_id, subtask_id=e.subtask_id, error=e.error,
                                    resolution=e.resolution, create_time=task_convert.timestamp(e.created_at), uid=e.uid)


def upserted(r: Reconciled) -> state_service_pb2.UpsertStateItemsResponse:
    return state_service_pb2.UpsertStateItemsResponse(report=report(r.report), items=[state_item(i) for i in r.items])


def decision_added(s: Stated) -> state_service_pb2.AddDecisionResponse:
    entry = dataclasses.replace(decision_of(s.entry), uid=s.item.uid)
    return state_service_pb2.AddDecisionResponse(decision=decision(entry), item=state_item(s.item),
                                                 report=report(s.report))


def error_added(s: Stated) -> state_service_pb2.AddErrorResponse:
    entry = dataclasses.replace(error_of(s.entry), uid=s.item.uid)
    return state_service_pb2.AddErrorResponse(error=error(entry), item=state_item(s.item), report=report(s.report))
