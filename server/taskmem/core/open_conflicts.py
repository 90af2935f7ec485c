"""Open questions: current state items reconciliation could not relate with certainty (core/reconcile).

Reconciliation keeps both items of a pair it cannot decide (a near item in other words, another value, scope
or object) and names each in the other's `conflict_with`. Listing them as two current decisions would hand
the agent two rival truths, so every view (the task-state YAML, GetProgress, BuildContext, RenderState, MCP,
the web view) splits the current items here, once: the plain items, and each group of items linked by
conflict_with shown as one question, "does [B] … replace [A] …, stand beside it, or say the same?", with
the calls that settle each answer (SETTLE_HINT). An answer (settle: AnswerQuestion, MCP answer_question, the
web view's buttons) or retiring all but one item closes it: the survivors are plain items again.

Pure: works on any item with uid, text, conflict and conflict_with (StoredStateItem, core/state_notes' Note).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, Protocol, TypeVar

from taskmem.core.errors import FailedPrecondition
from taskmem.core.state_items import SUPERSEDED, merge_items
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

# How a caller answers an open question; the write responses spell it out with the uids (settle_with).
SETTLE_HINT = ("answer each with StateService.AnswerQuestion(new_uid: B, old_uid: A, answer: REPLACES | STANDS_BESIDE"
               " | SAME) or MCP answer_question: REPLACES retires A, STANDS_BESIDE keeps both, SAME merges B into A")


class Answer(enum.StrEnum):
    """An answer to "does B replace A, stand beside it, or say the same?" (core/reconcile.Answer's words)."""

    REPLACES = "replaces"
    STANDS_BESIDE = "stands_beside"
    SAME = "same"


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
    """"does [d_b] Use Memcached replace [d_a] Use Redis, stand beside it, or say the same?" for (uid, text)
    pairs oldest first: the newest is B, the others A."""
    (new_uid, new_text), older = sides[-1], sides[:-1]
    them = " or ".join(f"[{uid}] {text}" for uid, text in older)
    return f"does [{new_uid}] {new_text} replace {them}, stand beside {'it' if len(older) == 1 else 'them'}," \
           f" or say the same?"


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
    """The open question a just-written item (B) raised about its rival (A), with the call for each answer,
    for the write's response."""
    call = f"StateService.AnswerQuestion(new_uid: {uid}, old_uid: {rival_uid}, answer:"
    return (f"open question: does [{uid}] replace [{rival_uid}], stand beside it, or say the same? Both stay"
            f" current until it is answered. Replaces: {call} REPLACES). Stands beside: {call} STANDS_BESIDE)."
            f" Says the same: {call} SAME). MCP: answer_question.")


@dataclasses.dataclass(frozen=True)
class Settled:
    """What an answer changed: B and A as they are now (one of them retired by REPLACES or SAME)."""

    new: StoredStateItem
    old: StoredStateItem


def settle(answer: Answer, new: StoredStateItem, old: StoredStateItem, answered_by: str, now: int) -> Settled:
    """The pair with an answer applied: REPLACES supersedes A by B, SAME merges B into A (B superseded by A),
    STANDS_BESIDE unlinks them. Each keeps its other rivals. Raises FailedPrecondition when the two are not an
    open question (not linked, or one retired)."""
    if not (new.active and old.active and (old.uid in new.conflict_with or new.uid in old.conflict_with)):
        raise FailedPrecondition(f"[{new.uid}] and [{old.uid}] are not an open question (not linked, or one is"
                                 " retired): ListStateItems or GetProgress.open_conflicts lists the open ones")
    new_rivals = [uid for uid in new.conflict_with if uid != old.uid]
    old_rivals = [uid for uid in old.conflict_with if uid != new.uid]
    evidence = {"rule": "answered", "answer": answer.value, "matched_by": f"answered by {answered_by}",
                "trigger": None, "ref_msg_id": None}
    new = dataclasses.replace(new, conflict_with=new_rivals, conflict=bool(new_rivals), updated_at=now)
    old = dataclasses.replace(old, conflict_with=old_rivals, conflict=bool(old_rivals), updated_at=now)
    if answer is Answer.REPLACES:
        old = dataclasses.replace(old, status=SUPERSEDED, replaced_by=new.uid,
                                  supersession_evidence={**evidence, "candidate_uid": new.uid})
    elif answer is Answer.SAME:
        merged = merge_items(old, new)
        old = dataclasses.replace(old, refs=merged.refs, topic_tags=merged.topic_tags, status=merged.status,
                                  confidence=merged.confidence, last_seen_at=merged.last_seen_at, pinned=merged.pinned)
        new = dataclasses.replace(new, status=SUPERSEDED, replaced_by=old.uid,
                                  supersession_evidence={**evidence, "candidate_uid": old.uid})
    return Settled(new, old)
