"""Retention: how long a namespace keeps each kind of memory, and when one written item expires (pure).

An item expires at the instant stamped on it when it is written: its own expire time if the writer gave
one, else its time plus the TTL configured for its namespace and kind (none configured: never). Stamping
at write time is what lets every read leave an expired item out by one indexed comparison with the
clock, from the moment it expires, whether or not maintenance has deleted it yet. A TTL configured later
applies to what is written from then on.

Action log lines are the exception: a line is written while its action runs, and a running action's log
is what its tail needs, so lines have no stamp; a line is expired once its action has finished and the
line is older than the TTL (`log_cutoff`), read against the configuration as it stands.

A count cap bounds how many live items of a kind a namespace keeps (`memory_entries_max`, `messages_max`):
a write that takes the namespace past it expires the oldest items the cap applies to at once, in the same
transaction (store/retention_caps.py). The cap applies to exactly the items a configured TTL applies to
(`entry_capped`, `message_capped`), so an exempt item is neither counted nor pushed out.

The event log's own TTL deletes whole ranges of a namespace's events, oldest first, up to a retention
cursor that never passes an event a webhook has still to send; a read from before it gets one
EVENTS_EXPIRED tombstone for the range (store/event_log.py).

Exempt from a configured TTL (an explicit expire time still applies):
- pinned items (the writer says so: `pinned` on a new memory entry, PostMessage and RecordEpisode);
- what a live task needs: memory entries of the types every task's views and GetRelevantMemories
  always read (decision, error, user_instruction: core.memory.ALWAYS_RELEVANT), the records behind its
  structured state; and the messages that record the task's course rather than a conversation (kinds
  lifecycle, plan, wait, stuck: what the server itself posts on a status change, a plan, a wait or an
  alert), which GetProgress and the views read.
"""

from __future__ import annotations

import dataclasses
import enum

from taskmem.core.errors import InvalidArgument
from taskmem.core.memory import ALWAYS_RELEVANT, NewMemoryEntry
from taskmem.core.messages import Kind as MessageKind

US = 1_000_000
EVERY_NAMESPACE = "*"


class Kind(enum.StrEnum):
    """The kinds of memory a TTL can be configured for."""

    MEMORY_ENTRIES = "memory_entries"
    MESSAGES = "messages"
    ACTION_LOGS = "action_logs"
    EPISODES = "episodes"
    EVENTS = "events"
    # A checkpoint expires this long after a newer one of its thread and namespace superseded it; the newest
    # never does (core/checkpoints.py).
    CHECKPOINTS = "checkpoints"


class Cap(enum.StrEnum):
    """The kinds of memory a count cap can be configured for: the key is the kind's name with "_max"."""

    MEMORY_ENTRIES = "memory_entries_max"
    MESSAGES = "messages_max"


# Messages a configured TTL applies to: conversation, not the record of the task's course.
EXPIRING_MESSAGE_KINDS = frozenset({MessageKind.TEXT, MessageKind.PROGRESS})


@dataclasses.dataclass(frozen=True)
class Retention:
    """TTLs in microseconds by (namespace, kind); the namespace "*" applies to every namespace not named."""

    ttls: tuple[tuple[str, Kind, int], ...] = ()
    caps: tuple[tuple[str, Cap, int], ...] = ()

    @classmethod
    def from_seconds(cls, settings: tuple[tuple[str, str, float], ...]) -> Retention:
        """From the configuration's (namespace, key, value) triples: a Kind key is a TTL in seconds, a Cap
        key a count."""
        caps = {cap.value for cap in Cap}
        return cls(tuple((namespace, Kind(key), int(value * US)) for namespace, key, value in settings
                         if key not in caps),
                   tuple((namespace, Cap(key), int(value)) for namespace, key, value in settings if key in caps))

    def ttl_us(self, namespace: str, kind: Kind) -> int:
        """The namespace's TTL for the kind, else every namespace's, else 0 (kept until deleted)."""
        found = {ns: ttl for ns, k, ttl in self.ttls if k is kind}
        return found.get(namespace, found.get(EVERY_NAMESPACE, 0))

    def cap(self, namespace: str, cap: Cap) -> int:
        """The namespace's count cap for the kind, else every namespace's, else 0 (no cap)."""
        found = {ns: count for ns, c, count in self.caps if c is cap}
        return found.get(namespace, found.get(EVERY_NAMESPACE, 0))

    def entry_expiry(self, namespace: str, entry: NewMemoryEntry, now: int) -> int | None:
        """When the entry, written now, expires (None: never)."""
        if entry.expires_at is not None:
            return entry.expires_at
        if entry.pinned or entry.type in ALWAYS_RELEVANT:
            return None
        ttl = self.ttl_us(namespace, Kind.MEMORY_ENTRIES)
        return now + ttl if ttl else None

    def message_expiry(self, namespace: str, kind: MessageKind, expires_at: int | None, pinned: bool,
                       now: int) -> int | None:
        """When a message of this kind, posted now, expires (None: never); expires_at: the poster's own."""
        if expires_at is not None:
            return expires_at
        if pinned or kind not in EXPIRING_MESSAGE_KINDS:
            return None
        ttl = self.ttl_us(namespace, Kind.MESSAGES)
        return now + ttl if ttl else None


    def episode_expiry(self, namespace: str, expires_at: int | None, pinned: bool, now: int) -> int | None:
        """When an episode recorded now expires (None: never); expires_at: the recorder's own."""
        if expires_at is not None or pinned:
            return expires_at
        ttl = self.ttl_us(namespace, Kind.EPISODES)
        return now + ttl if ttl else None

    def event_cutoff(self, namespace: str, now: int) -> int | None:
        """Events of the namespace committed at or before this time may be deleted (None: kept)."""
        ttl = self.ttl_us(namespace, Kind.EVENTS)
        return now - ttl if ttl else None

    def log_cutoff(self, namespace: str, now: int) -> int | None:
        """Lines of a finished action written at or before this time are expired (None: the namespace keeps them)."""
        ttl = self.ttl_us(namespace, Kind.ACTION_LOGS)
        return now - ttl if ttl else None

    def checkpoint_expiry(self, namespace: str, now: int) -> int | None:
        """When a checkpoint superseded now expires (None: kept until deleted)."""
        ttl = self.ttl_us(namespace, Kind.CHECKPOINTS)
        return now + ttl if ttl else None

    def shortest_ttl_us(self, kind: Kind) -> int:
        """The shortest TTL any namespace has for the kind (0: none has one)."""
        return min((ttl for _, k, ttl in self.ttls if k is kind and ttl), default=0)


def entry_capped(entry: NewMemoryEntry) -> bool:
    """Whether a count cap applies to the entry: the items a configured TTL applies to (pinned and the types a
    live task needs are exempt), whether or not it carries its own expire time."""
    return not entry.pinned and entry.type not in ALWAYS_RELEVANT


def message_capped(kind: MessageKind, pinned: bool) -> bool:
    """Whether a count cap applies to a message of this kind: conversation, not the task's course; not pinned."""
    return not pinned and kind in EXPIRING_MESSAGE_KINDS


def check_expiry(field: str, expires_at: int | None, pinned: bool, now: int) -> None:
    """An explicit expire time must lie ahead, and a pinned item cannot have one."""
    if expires_at is None:
        return
    if pinned:
        raise InvalidArgument(field, "cannot be set on a pinned item (pinned items never expire)")
    if expires_at <= now:
        raise InvalidArgument(field, "is not in the future")
