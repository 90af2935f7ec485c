"""The transcript (messages of a thread) and context snapshots."""

from __future__ import annotations

import dataclasses
import enum


class Role(enum.StrEnum):
    USER = "MESSAGE_ROLE_USER"
    AGENT = "MESSAGE_ROLE_AGENT"
    SYSTEM = "MESSAGE_ROLE_SYSTEM"
    TOOL = "MESSAGE_ROLE_TOOL"


class Kind(enum.StrEnum):
    TEXT = "MESSAGE_KIND_TEXT"
    LIFECYCLE = "MESSAGE_KIND_LIFECYCLE"
    PROGRESS = "MESSAGE_KIND_PROGRESS"
    WAIT = "MESSAGE_KIND_WAIT"
    STUCK = "MESSAGE_KIND_STUCK"
    PLAN = "MESSAGE_KIND_PLAN"


@dataclasses.dataclass
class Message:
    namespace: str
    id: str
    thread_id: str
    role: Role
    kind: Kind
    content: str
    created_at: int
    task_id: str = ""
    expires_at: int | None = None  # from then on no read returns it (core/retention.py)


@dataclasses.dataclass
class ContextSnapshot:
    namespace: str
    id: str
    task_id: str
    sequence: int
    label: str
    content: str
    summarized: bool
    created_at: int


@dataclasses.dataclass(frozen=True)
class SessionItem:
    """One item of a framework's conversation session (the OpenAI Agents SDK's), kept in a task's transcript:
    the message that holds it and the item's exact JSON."""

    message_id: str
    item_json: str
    created_at: int


@dataclasses.dataclass(frozen=True)
class NewSessionItem:
    role: Role
    content: str
    item_json: str
