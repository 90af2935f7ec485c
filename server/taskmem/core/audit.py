"""Who changed what: the caller an event records, and a change told in words for the task's history.

The api ring sets ACTOR for each call (the key's id, never its secret, and the agent id the caller sends in
x-taskmem-agent); the writer reads it when a write is submitted, so every event the write emits names them.
Background work (the wait scheduler, maintenance) runs with no caller: its events name no key.
"""

from __future__ import annotations

import contextvars
import dataclasses
from typing import Any

from taskmem.core.events import EventType


@dataclasses.dataclass(frozen=True)
class Actor:
    key_id: str = ""
    agent_id: str = ""


NOBODY = Actor()
ACTOR: contextvars.ContextVar[Actor] = contextvars.ContextVar("taskmem_actor", default=NOBODY)

_QUOTE_MAX = 80


def _quoted(text: Any) -> str:
    words = " ".join(str(text or "").split())
    if len(words) > _QUOTE_MAX:
        words = words[:_QUOTE_MAX - 1] + "…"
    return f"'{words}'"


def _status(value: Any, prefix: str) -> str:
    return str(value or "").removeprefix(prefix).lower().replace("_", " ")


def _by(key_id: str, agent_id: str) -> str:
    if key_id and agent_id:
        return f" by key {key_id} (agent {agent_id})"
    if key_id:
        return f" by key {key_id}"
    if agent_id:
        return f" by agent {agent_id}"
    return ""


def _statement(kind: str, payload: dict[str, Any], replaced_text: str) -> str:
    uid = payload.get("uid", "")
    text = payload.get("text") or payload.get("error") or ""
    outcome = payload.get("outcome", "")
    target = payload.get("target_uid", "")
    said = f"{kind} {uid} {_quoted(text)}".replace("  ", " ")
    if outcome.startswith("supersede") and target:
        return f"{said} replaces {target} {_quoted(replaced_text)}" if replaced_text else f"{said} replaces {target}"
    if outcome.startswith("merge") and target:
        return f"{kind} {_quoted(text)} merged into {target}"
    if outcome.startswith("conflict") and target:
        return f"{said} added, in conflict with {target}"
    return f"{said} added"


def _step(payload: dict[str, Any]) -> str:
    """"step 3 'Build'": the item's place in its plan (ordinal counts from 0; proto JSON leaves 0 out)."""
    ordinal = payload.get("ordinal", 0)
    name = f"step {int(ordinal) + 1}" if isinstance(ordinal, (int, float)) else f"step {payload.get('id', '')}"
    return f"{name} {_quoted(payload.get('title'))}"


def describe_change(event_type: str, payload: dict[str, Any], key_id: str = "", agent_id: str = "",
                    replaced_text: str = "") -> str:
    """One line saying what an event of the task's state history changed, and who (when a key did).

    replaced_text: for a statement that superseded another, the text of the one it replaced."""
    by = _by(key_id, agent_id)
    kind = event_type.removeprefix("EVENT_TYPE_")
    if event_type == EventType.TASK_CREATED:
        return f"task {_quoted(payload.get('name'))} created{by}"
    if event_type == EventType.TASK_UPDATED:
        return f"task {_quoted(payload.get('name'))} updated{by}"
    if event_type == EventType.TASK_STATUS_CHANGED:
        return (f"task status {_status(payload.get('from'), 'TASK_STATUS_')} → "
                f"{_status(payload.get('to'), 'TASK_STATUS_')}{by}")
    if event_type == EventType.TASK_STUCK:
        return "task reported stuck (no update for a while)"
    if event_type == EventType.TASK_AUTO_PAUSED:
        return "task paused by maintenance (no update for a while)"
    if event_type == EventType.TASK_AUTO_ARCHIVED:
        return "task archived by maintenance"
    if event_type == EventType.PLAN_REPLACED:
        items = payload.get("items") or []
        return f"plan version {payload.get('version', '?')} with {len(items)} steps{by}"
    if event_type == EventType.PLAN_ITEM_UPDATED:
        status = _status(payload.get("status"), "PLAN_ITEM_STATUS_")
        inferred = " (inferred from a message)" if payload.get("inference") else ""
        return f"{_step(payload)} {status}{inferred}{by}"
    if event_type == EventType.PLAN_ITEM_CLAIMED:
        return f"{_step(payload)} claimed by holder {payload.get('holder_id', '')}{by}"
    if event_type == EventType.PLAN_ITEM_CLAIM_RELEASED:
        return f"{_step(payload)} released{by}"
    if event_type == EventType.PLAN_ITEM_CLAIM_EXPIRED:
        return f"{_step(payload)}: its claim expired"
    if event_type == EventType.TASK_STATE_DECISION_ADDED:
        return _statement("decision", payload, replaced_text) + by
    if event_type == EventType.TASK_STATE_ERROR_ADDED:
        return _statement("error", payload, replaced_text) + by
    if event_type == EventType.STATE_ITEMS_UPSERTED:
        return f"{len(payload.get('results') or [])} state items reconciled{by}"
    if event_type == EventType.STATE_EXTRACTION_COMPLETED:
        return f"state extracted from messages ({len(payload.get('results') or [])} candidates){by}"
    if event_type == EventType.STATE_ITEM_UPDATED:
        kind_name = _status(payload.get("type"), "STATE_ITEM_TYPE_")
        return (f"{kind_name} {payload.get('uid', '')} {_quoted(payload.get('text'))} now "
                f"{_status(payload.get('status'), 'STATE_ITEM_STATUS_')}"
                f"{', pinned' if payload.get('pinned') else ''}{by}")
    if event_type.startswith("EVENT_TYPE_WAIT_"):
        verb = {EventType.WAIT_CREATED: "created", EventType.WAIT_RESOLVED: "resolved",
                EventType.WAIT_TIMED_OUT: "timed out", EventType.WAIT_CANCELLED: "cancelled",
                EventType.WAIT_FAILED: "failed"}.get(EventType(event_type), kind.lower())
        return f"wait {payload.get('id', '')} {verb}{by}"
    if event_type == EventType.ARTIFACT_REGISTERED:
        return f"artifact {payload.get('path', '')} registered{by}"
    if event_type == EventType.ARTIFACT_DELETED:
        return f"artifact {payload.get('path', '')} deleted{by}"
    return f"{kind.lower().replace('_', ' ')}{by}"
