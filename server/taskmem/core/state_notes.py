"""What a task's reconciled structured state says right now, in the shape the "where was I?" views use.

Every view (the task-state YAML, GetProgress, QueryTask without a model, BuildContext) reads these
notes, so a superseded item is never shown as current anywhere: only active decisions, constraints
and risks, open questions, the errors the caller recorded (AddError), and the task's open waits.
Current items in conflict with each other are in none of those lists: each group is one open
conflict (core/open_conflicts), which the views ask as a question.
Pure: the caller reads the items, their links to memory entries and the waits.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from taskmem.core.open_conflicts import OpenConflict, flagged_alone, split_conflicts
from taskmem.core.state_records import StoredStateItem
from taskmem.core.person_waits import person_target
from taskmem.core.waits import ExternalTarget, Wait

ERROR_KIND, DECISION_KIND = "error", "decision"
RESOLVED = "done"  # an error item's status once a resolution was recorded


@dataclasses.dataclass(frozen=True)
class EntryLink:
    """A memory entry (AddDecision, AddError) and the state item it was reconciled into."""

    uid: str
    memory_entry_id: str
    kind: str  # DECISION_KIND or ERROR_KIND
    subtask_id: str
    detail: str  # an error's resolution, a decision's detail
    created_at: int


@dataclasses.dataclass
class Note:
    """One current state item: its text, and the subtask and memory entry that stated it, if any."""

    uid: str
    text: str
    created_at: int
    subtask_id: str = ""
    memory_entry_id: str = ""
    resolution: str = ""  # errors only
    conflict: bool = False  # flagged by its source with no rival named (core/open_conflicts.flagged_alone)
    conflict_with: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class WaitNote:
    id: str
    kind: str
    criteria: str
    since: int
    timeout_us: int | None
    deadline_at: int | None
    person: ExternalTarget | None = None  # a wait on a person: who must answer what (core/person_waits)


@dataclasses.dataclass
class StateNotes:
    """Each list oldest first (as a log reads)."""

    decisions: list[Note] = dataclasses.field(default_factory=list)
    constraints: list[Note] = dataclasses.field(default_factory=list)
    questions: list[Note] = dataclasses.field(default_factory=list)
    risks: list[Note] = dataclasses.field(default_factory=list)
    errors: list[Note] = dataclasses.field(default_factory=list)
    waits: list[WaitNote] = dataclasses.field(default_factory=list)
    conflicts: list[OpenConflict[Note]] = dataclasses.field(default_factory=list)  # by their oldest item


def state_notes(items: Iterable[StoredStateItem], links: Sequence[EntryLink], waits: Iterable[Wait]) -> StateNotes:
    """The current notes of a thread: items are the thread's state items (any status), links every
    memory-entry link of the thread (oldest first), waits the task's open waits."""
    by_uid = {item.uid: item for item in items}
    stated: dict[str, EntryLink] = {}
    for link in links:
        stated[link.uid] = link  # the newest statement of each item wins
    error_uids = [uid for uid, link in stated.items() if link.kind == ERROR_KIND]
    notes = StateNotes()
    current = [item for item in sorted(by_uid.values(), key=lambda i: (i.created_at, i.uid)) if item.active]
    _, conflicts = split_conflicts(current)
    notes.conflicts = [OpenConflict(tuple(_note(item, stated.get(item.uid)) for item in conflict.items))
                       for conflict in conflicts]
    in_conflict = {uid for conflict in conflicts for uid in conflict.uids}
    lists = {"decision": notes.decisions, "constraint": notes.constraints, "risk": notes.risks}
    for item in current:
        if item.uid in error_uids or item.uid in in_conflict:
            continue
        kind = str(item.type_tag)
        target = notes.questions if kind == "question" and item.status == "open" else lists.get(kind)
        if target is not None:
            target.append(_note(item, stated.get(item.uid)))
    errors = sorted((stated[uid] for uid in error_uids
                     if uid in by_uid and by_uid[uid].active and uid not in in_conflict),
                    key=lambda link: (link.created_at, link.memory_entry_id))
    notes.errors = [_note(by_uid[link.uid], link) for link in errors]
    notes.waits = [WaitNote(w.id, w.kind, w.criteria, w.created_at, w.timeout_us, w.deadline_at, person_target(w))
                   for w in sorted(waits, key=lambda w: (w.created_at, w.id))]
    return notes


def _note(item: StoredStateItem, link: EntryLink | None) -> Note:
    note = Note(item.uid, item.text, item.created_at, conflict=flagged_alone(item),
                conflict_with=list(item.conflict_with))
    if link is not None:
        note.subtask_id, note.memory_entry_id = link.subtask_id, link.memory_entry_id
        note.created_at = link.created_at
        if link.kind == ERROR_KIND:
            note.resolution = link.detail
    return note

