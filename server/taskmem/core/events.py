"""Events: one per mutation, committed with it."""

from __future__ import annotations

import dataclasses
import enum
from typing import Any


class EventType(enum.StrEnum):
    TASK_CREATED = "EVENT_TYPE_TASK_CREATED"
    TASK_UPDATED = "EVENT_TYPE_TASK_UPDATED"
    TASK_STATUS_CHANGED = "EVENT_TYPE_TASK_STATUS_CHANGED"
    PLAN_REPLACED = "EVENT_TYPE_PLAN_REPLACED"
    PLAN_ITEM_UPDATED = "EVENT_TYPE_PLAN_ITEM_UPDATED"
    ACTION_RECORDED = "EVENT_TYPE_ACTION_RECORDED"
    ACTION_COMPLETED = "EVENT_TYPE_ACTION_COMPLETED"
    ACTION_LOG_APPENDED = "EVENT_TYPE_ACTION_LOG_APPENDED"
    MESSAGE_POSTED = "EVENT_TYPE_MESSAGE_POSTED"
    CONTEXT_SNAPSHOT_RECORDED = "EVENT_TYPE_CONTEXT_SNAPSHOT_RECORDED"
    WAIT_CREATED = "EVENT_TYPE_WAIT_CREATED"
    WAIT_RESOLVED = "EVENT_TYPE_WAIT_RESOLVED"
    WAIT_TIMED_OUT = "EVENT_TYPE_WAIT_TIMED_OUT"
    WAIT_CANCELLED = "EVENT_TYPE_WAIT_CANCELLED"
    WAIT_FAILED = "EVENT_TYPE_WAIT_FAILED"
    TASK_STUCK = "EVENT_TYPE_TASK_STUCK"
    TASK_AUTO_PAUSED = "EVENT_TYPE_TASK_AUTO_PAUSED"
    TASK_AUTO_ARCHIVED = "EVENT_TYPE_TASK_AUTO_ARCHIVED"
    # MemoryService (19–39)
    MEMORY_ENTRY_ADDED = "EVENT_TYPE_MEMORY_ENTRY_ADDED"
    MEMORY_EXTRACTION_COMPLETED = "EVENT_TYPE_MEMORY_EXTRACTION_COMPLETED"
    KNOWLEDGE_UPSERTED = "EVENT_TYPE_KNOWLEDGE_UPSERTED"
    KNOWLEDGE_DELETED = "EVENT_TYPE_KNOWLEDGE_DELETED"
    EPISODE_RECORDED = "EVENT_TYPE_EPISODE_RECORDED"
    ARTIFACT_REGISTERED = "EVENT_TYPE_ARTIFACT_REGISTERED"
    ARTIFACT_DELETED = "EVENT_TYPE_ARTIFACT_DELETED"
    PATTERN_RECORDED = "EVENT_TYPE_PATTERN_RECORDED"
    # StateService (40–59)
    TASK_STATE_DECISION_ADDED = "EVENT_TYPE_TASK_STATE_DECISION_ADDED"
    TASK_STATE_ERROR_ADDED = "EVENT_TYPE_TASK_STATE_ERROR_ADDED"
    STATE_EXTRACTION_COMPLETED = "EVENT_TYPE_STATE_EXTRACTION_COMPLETED"
    STATE_ITEMS_UPSERTED = "EVENT_TYPE_STATE_ITEMS_UPSERTED"
    STATE_ITEM_UPDATED = "EVENT_TYPE_STATE_ITEM_UPDATED"
    RUNNING_SUMMARY_UPDATED = "EVENT_TYPE_RUNNING_SUMMARY_UPDATED"
    # Maintenance: episode retention (60–61)
    EPISODE_ARCHIVED = "EVENT_TYPE_EPISODE_ARCHIVED"
    EPISODE_DELETED = "EVENT_TYPE_EPISODE_DELETED"
    # Retention (62): a read from before a namespace's retention cursor (never stored)
    EVENTS_EXPIRED = "EVENT_TYPE_EVENTS_EXPIRED"
    # Claims of plan items (70–79)
    PLAN_ITEM_CLAIMED = "EVENT_TYPE_PLAN_ITEM_CLAIMED"
    PLAN_ITEM_CLAIM_RELEASED = "EVENT_TYPE_PLAN_ITEM_CLAIM_RELEASED"
    PLAN_ITEM_CLAIM_EXPIRED = "EVENT_TYPE_PLAN_ITEM_CLAIM_EXPIRED"
    # Forks (80–89)
    TASK_FORKED = "EVENT_TYPE_TASK_FORKED"


@dataclasses.dataclass
class Event:
    namespace: str
    type: EventType
    task_id: str
    correlation_id: str
    payload: dict[str, Any]
    created_at: int
    cursor: int = 0  # assigned when stored
    # When the item it carries expires (core/retention.py): from then on it reads as a tombstone.
    expires_at: int | None = None
    # True when read as a tombstone: the payload keeps only the item's id (`tombstone`).
    expired: bool = False
    # Who made the change (core/audit.py): the API key's id and the agent id the caller gave.
    key_id: str = ""
    agent_id: str = ""


def tombstone(payload: dict[str, Any]) -> dict[str, Any]:
    """What an expired event's payload keeps: the id of the item it carried, nothing of its content."""
    return {"id": payload["id"]} if "id" in payload else {}


@dataclasses.dataclass(frozen=True)
class EventFilter:
    namespace: str
    task_ids: frozenset[str] = frozenset()
    types: frozenset[EventType] = frozenset()
    key_ids: frozenset[str] = frozenset()
    agent_ids: frozenset[str] = frozenset()

    def matches(self, event: Event) -> bool:
        return (event.namespace == self.namespace
                and (not self.task_ids or event.task_id in self.task_ids)
                and (not self.types or event.type in self.types)
                and (not self.key_ids or event.key_id in self.key_ids)
                and (not self.agent_ids or event.agent_id in self.agent_ids))
