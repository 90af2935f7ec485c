"""Open conflicts: current state items that contradict each other, with nothing yet saying which holds.

Reconciliation keeps both sides of a contradiction it cannot decide and names each in the other's
`conflict_with`. Listing them as two current decisions would hand the agent two rival truths, so every
view (the task-state YAML, GetProgress, BuildContext, RenderState, MCP, the web view) splits the current
items here, once: the plain items, and each group of items linked by conflict_with shown as one question
("which holds? [d_a] … — or [d_b] …"). The caller settles it with a call (SETTLE_HINT). A group is open
only while at least two of its items are current: once all but one are retired (superseded), the survivor
is a plain item again, whatever its stored flag still says.

Pure: works on any item with uid, text, conflict and conflict_with (StoredStateItem, core/state_notes' Note).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from taskmem.core.state_records import StoredStateItem


class ConflictItem(Protocol):
    @property
    def uid(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def conflict(self) -> bool: ...
    @property
    def conflict_with(self) -> Sequence[str]: ...
    @property
    def created_at(self) -> int: ...


T = TypeVar("T", bound=ConflictItem)

# How a caller settles an open conflict; the write responses spell it out with the uids (settle_with).
SETTLE_HINT = ("settle: SetStateItemStatus(uid, SUPERSEDED) on each statement that no longer holds,"
               " or re-send the one that holds with supersedes: <the other uid>")


@dataclasses.dataclass(frozen=True)
class OpenConflict(Generic[T]):
    """Two (or more) current items in conflict, oldest first: the question reads as the statements came."""

    items: tuple[T, ...]

    @property
    def uids(self) -> list[str]:
        return [item.uid for item in self.items]

    def question(self, cut: Callable[[str], str] = lambda text: text) -> str:
        return conflict_question([(item.uid, cut(item.text)) for item in self.items])


def conflict_question(sides: Sequence[tuple[str, str]]) -> str:
    """"which holds? [d_a] Use Redis for caching — or [d_b] Do not use Redis for caching" for (uid, text) pairs."""
    return "which holds? " + " — or ".join(f"[{uid}] {text}" for uid, text in sides)


def split_conflicts(items: Iterable[T]) -> tuple[list[T], list[OpenConflict[T]]]:
    """(plain items, open conflicts) of a view's current items, both in the order given (a conflict where its
    first item is; its items oldest first).

    Items linked through conflict_with (either side naming the other, transitively) form one conflict;
    a partner that is not among the items (retired, or never current) does not count. The caller passes
    the current items only."""
    given = list(items)
    by_uid = {item.uid: item for item in given}
    root = {uid: uid for uid in by_uid}

    def find(uid: str) -> str:
        while root[uid] != uid:
            root[uid] = root[root[uid]]
            uid = root[uid]
        return uid

    for item in given:
        for other in item.conflict_with:
            if other in by_uid and other != item.uid:
                root[find(other)] = find(item.uid)
    groups: dict[str, list[T]] = {}
    for item in given:
        groups.setdefault(find(item.uid), []).append(item)
    plain = [item for item in given if len(groups[find(item.uid)]) == 1]
    conflicts = [OpenConflict(tuple(sorted(group, key=lambda item: (item.created_at, item.uid))))
                 for group in groups.values() if len(group) > 1]
    return plain, conflicts


def flagged_alone(item: ConflictItem) -> bool:
    """Flagged in conflict by its source with no rival named (an extractor's or caller's own flag): a view
    marks it, as it cannot ask which of two holds. An item whose named rivals were all retired is not."""
    return bool(item.conflict) and not item.conflict_with


def released(retired_uid: str, partners: Iterable[StoredStateItem],
             current: Callable[[str], bool]) -> list[StoredStateItem]:
    """The partners of a retired item with it taken out of their conflict_with, each flag cleared when no
    current rival remains (current(uid) says whether a uid is still current). Only changed partners."""
    changed: list[StoredStateItem] = []
    for partner in partners:
        rivals = list(partner.conflict_with)
        if retired_uid not in rivals:
            continue
        left = [uid for uid in rivals if uid != retired_uid]
        changed.append(dataclasses.replace(partner, conflict_with=left,
                                           conflict=any(current(uid) for uid in left)))
    return changed


def settle_with(uid: str, rival_uid: str) -> str:
    """The calls that settle a conflict between a just-written item and its rival, for the write's response."""
    return (f"open conflict: [{uid}] and [{rival_uid}] are both current until one is retired. To keep [{uid}]:"
            f" SetStateItemStatus(uid: {rival_uid}, status: SUPERSEDED), or send it again (UpsertStateItems,"
            f" AddDecision) with supersedes: {rival_uid}."
            f" To keep [{rival_uid}]: SetStateItemStatus(uid: {uid}, status: SUPERSEDED).")
