"""The task's decisions and errors as the views list them (from the reconciled state), its workspace
changes, and BuildContext's knowledge and memories; AddDecision and AddError write their memory entries
(the complete history) through MemoryService's store function."""

from __future__ import annotations

from taskmem.core.knowledge import KnowledgeCategory
from collections.abc import Iterable

from taskmem.core.memory import MemoryEntry, MemoryType, NewMemoryEntry
from taskmem.core.state_items import StateItem, normalize_text
from taskmem.core.state_notes import StateNotes
from taskmem.core import task_state_yaml
from taskmem.core.task_state_yaml import MAX_DECISIONS, MAX_ERRORS, DecisionEntry, ErrorEntry, WorkspaceChanges
from taskmem.store.state import view_reads
from taskmem.store.memory.memory_entries import relevant_entries
from taskmem.store.access import Reader

KNOWLEDGE_LINES, MEMORY_LINES = 50, 20
# BuildContext's "skills" share: the namespace's conventions and decisions.
CONTEXT_KNOWLEDGE = [KnowledgeCategory.CONVENTION.value, KnowledgeCategory.DECISION.value]


def decision_of(entry: MemoryEntry) -> DecisionEntry:
    return DecisionEntry(entry.id, entry.summary, entry.subtask_id, entry.created_at)


def error_of(entry: MemoryEntry) -> ErrorEntry:
    """An error entry's summary is the error, its detail the resolution (as AddError writes them)."""
    return ErrorEntry(entry.id, entry.subtask_id, entry.summary, entry.detail, entry.created_at)


def decision_entry(task_id: str, text: str, subtask_id: str, detail: str) -> NewMemoryEntry:
    return NewMemoryEntry(task_id=task_id, type=MemoryType.DECISION, summary=text, subtask_id=subtask_id,
                          detail=detail, source="state")


def error_entry(task_id: str, subtask_id: str, error: str, resolution: str) -> NewMemoryEntry:
    return NewMemoryEntry(task_id=task_id, type=MemoryType.ERROR, summary=error, subtask_id=subtask_id,
                          detail=resolution, source="state")


def newest_decisions(notes: StateNotes) -> list[DecisionEntry]:
    """The newest active decisions of the reconciled state, newest first (a superseded one never)."""
    return [task_state_yaml.decision_entry(n) for n in reversed(notes.decisions[-MAX_DECISIONS:])]


def newest_errors(notes: StateNotes) -> list[ErrorEntry]:
    return [task_state_yaml.error_entry(n) for n in reversed(notes.errors[-MAX_ERRORS:])]


def workspace_of(db: Reader, namespace: str, task_id: str, at: int | None = None) -> WorkspaceChanges | None:
    created, modified, last = view_reads.workspace_changes(db, namespace, task_id, at)
    return WorkspaceChanges(created, modified, last) if created else None


# Memory types whose current truth is the reconciled state: BuildContext's state section shows them.
_STATE_TYPES = {MemoryType.DECISION.value, MemoryType.ERROR.value}


def context_lines(db: Reader, namespace: str, task_id: str, query: str,
                  stated: Iterable[StateItem] = (), at: int | None = None) -> tuple[list[str], list[str]]:
    """BuildContext's knowledge lines (the namespace's conventions and decisions) and memory lines: with a
    query, the task's entries that match it by full text (best first), then its relevant memories
    (user instructions, discoveries, …, newest first).

    The memories section never repeats the state section nor contradicts it: decisions and errors live
    in the reconciled state (a superseded decision must not come back as a [decision] line), and an
    entry saying what a current state item of the thread says (`stated`) is left out. at: as of then."""
    knowledge = [f"- [{category.removeprefix('KNOWLEDGE_CATEGORY_').lower()}] {key}: {value}"
                 for category, key, value in view_reads.namespace_knowledge(db, namespace, CONTEXT_KNOWLEDGE,
                                                                            KNOWLEDGE_LINES, at)]
    if not task_id:
        return knowledge, []
    found = view_reads.search_task_memories(db, namespace, task_id, query, MEMORY_LINES, at) if query else []
    found += [(e.type.value, e.summary) for e in relevant_entries(db, namespace, task_id, "", 3 * MEMORY_LINES, at)]
    said = {normalize_text(item.text) for item in stated}
    lines = [f"- [{kind.removeprefix('MEMORY_TYPE_').lower()}] {summary}" for kind, summary in found
             if kind not in _STATE_TYPES and normalize_text(summary) not in said]
    return knowledge, list(dict.fromkeys(lines))[:MEMORY_LINES]
