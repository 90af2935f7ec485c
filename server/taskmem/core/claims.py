"""Claims of plan items: which item a claimer is handed, and the rules of a lease.

A claim is an agent's lease on one item of a task's current plan (ClaimPlanItem). It counts only while
the item is IN_PROGRESS and the lease has not expired: the store removes a claim whose item left
IN_PROGRESS, and returns an expired claim's item to PENDING. Choosing is pure; the store calls it
under the task's row lock, so the claims it reads are every claim there is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

from taskmem.core.errors import ClaimNotHeld, FailedPrecondition, InvalidArgument
from taskmem.core.plans import DONE, ITEM_AWAITING_PERSON, Claim, ItemStatus, PlanItem

DEFAULT_LEASE_US = 30 * 1_000_000
MIN_LEASE_US = 1_000_000
MAX_LEASE_US = 3600 * 1_000_000
# Items that will be ready again or are being worked on: an item waiting on a person returns when answered.
_NOT_YET_DONE = frozenset({ItemStatus.PENDING, ItemStatus.IN_PROGRESS, *ITEM_AWAITING_PERSON})


@dataclasses.dataclass
class ClaimEvent:
    """What a claim event carries: the item as it is now, its plan version and the claim (as it was, for an
    ending one)."""

    item: PlanItem
    plan_version: int
    claim: Claim


@dataclasses.dataclass(frozen=True)
class ClaimFilter:
    item_id: str = ""
    stages: frozenset[str] = frozenset()
    tool_names: frozenset[str] = frozenset()

    def matches(self, item: PlanItem) -> bool:
        return ((not self.item_id or item.id == self.item_id)
                and (not self.stages or item.stage in self.stages)
                and (not self.tool_names or item.tool_name in self.tool_names))


def lease_us(field: str, given: int | None) -> int:
    """The lease asked for (µs), or the default; INVALID_ARGUMENT outside 1 s .. 1 hour."""
    if given is None:
        return DEFAULT_LEASE_US
    if not MIN_LEASE_US <= given <= MAX_LEASE_US:
        raise InvalidArgument(field, "must be between 1s and 3600s")
    return given


def is_ready(item: PlanItem, by_id: Mapping[str, PlanItem], held: Collection[str]) -> bool:
    """PENDING, every dependency COMPLETED or SKIPPED, and not held."""
    return (item.status is ItemStatus.PENDING and item.id not in held
            and all(by_id[d].status in DONE for d in item.depends_on if d in by_id))


def choose_item(items: list[PlanItem], held: Mapping[str, str], wanted: ClaimFilter) -> tuple[PlanItem | None, int]:
    """The first ready item in plan order that matches, and how many other matching items are PENDING or
    IN_PROGRESS (0 with no item: nothing matching will ever be ready). held maps item id -> holder.

    A named item that is not ready is FAILED_PRECONDITION saying why (a claim held by another is
    ClaimNotHeld naming the holder)."""
    by_id = {item.id: item for item in items}
    chosen = next((item for item in items if wanted.matches(item) and is_ready(item, by_id, held)), None)
    if chosen is None and wanted.item_id:
        named = by_id[wanted.item_id]
        if named.id in held:
            raise FailedPrecondition(f"plan item {named.id!r} is held by {held[named.id]!r}", item_id=named.id,
                                     holder_id=held[named.id])
        if named.status is not ItemStatus.PENDING:
            raise FailedPrecondition(f"plan item {named.id!r} is {named.status.value}, not PENDING", item_id=named.id)
        waiting = [d for d in named.depends_on if d in by_id and by_id[d].status not in DONE]
        raise FailedPrecondition(f"plan item {named.id!r} waits on {', '.join(waiting)}", item_id=named.id)
    remaining = sum(1 for item in items if wanted.matches(item) and item is not chosen
                    and item.status in _NOT_YET_DONE)
    return chosen, remaining


def check_holder(item_id: str, holder: str, current: Claim | None) -> Claim:
    """The holder's claim of the item; ClaimNotHeld naming the current holder when it is not the holder's."""
    if current is None or current.holder != holder:
        raise ClaimNotHeld(item_id, holder, current.holder if current else "")
    return current
