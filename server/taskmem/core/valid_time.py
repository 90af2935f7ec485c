"""Valid time (issue 29): what held at a past moment, from the valid-time columns rows keep. Pure.

A read "as of" a moment gets `at`, a time in microseconds: a row written at or before `at` counts.
An event cursor stands for its commit time (the store resolves it, store/as_of.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TypeVar

from taskmem.core.state_items import SUPERSEDED
from taskmem.core.state_records import StoredStateItem

H = TypeVar("H")


@dataclasses.dataclass(frozen=True)
class AsOf:
    """A moment a read answers for, as the caller named it: a time (µs) or an event cursor."""

    time: int | None = None
    cursor: int | None = None


@dataclasses.dataclass(frozen=True)
class Moment:
    """A resolved AsOf: rows written at or before `at` (µs) count; events count up to `cursor` when the
    caller named one (several events can share a microsecond), else up to `at`."""

    at: int
    cursor: int | None = None


@dataclasses.dataclass(frozen=True)
class StateVersion:
    """One version of a task's state: the event that made it (its cursor, time, type) and who asked."""

    cursor: int
    created_at: int
    change: str
    correlation_id: str
    key_id: str = ""
    agent_id: str = ""
    description: str = ""  # the change in words (core/audit.describe_change)


def item_as_of(item: StoredStateItem, at: int) -> StoredStateItem | None:
    """The item as it stood at `at`: None before it was created; superseded later, it shows the status
    it held then, with no replacement yet. Changes between other statuses keep the latest (the row keeps
    only the supersession's time)."""
    if item.created_at > at:
        return None
    if item.status == SUPERSEDED and item.valid_to is not None and item.valid_to > at:
        return dataclasses.replace(item, status=item.prior_status, replaced_by=None, supersession_evidence=None,
                                   valid_to=None, prior_status="")
    return item


def current_first(hits: Sequence[H], superseded: Callable[[H], bool], limit: int) -> list[H]:
    """SearchMemories' order without include_history: every current hit before every superseded one,
    each group in its own order, cut to limit."""
    return ([hit for hit in hits if not superseded(hit)] + [hit for hit in hits if superseded(hit)])[:limit]
