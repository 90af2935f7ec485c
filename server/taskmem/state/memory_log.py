"""The task's decisions and errors, its workspace changes, and BuildContext's knowledge and memories,
read from what MemoryService keeps; AddDecision and AddError write through its store function."""

from __future__ import annotations

from taskmem.core.knowledge import KnowledgeCategory
from taskmem.core.memory import MemoryEntry, MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.task_state_yaml import MAX_DECISIONS, MAX_ERRORS, DecisionEntry, ErrorEntry, WorkspaceChanges
from taskmem.store import state_task
from taskmem.store.memory_entries import query_entries, relevant_entries
from taskmem.store.writer import Reader

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


def task_log(db: Reader, namespace: str, task_id: str) -> tuple[list[DecisionEntry], list[ErrorEntry],
                                                                 WorkspaceChanges | None]:
    """The newest decisions and errors (newest first) and the workspace changes of a task."""
    decisions = query_entries(db, namespace, MemoryFilter(task_id=task_id, types=(MemoryType.DECISION,)),
                              MAX_DECISIONS)
    errors = query_entries(db, namespace, MemoryFilter(task_id=task_id, types=(MemoryType.ERROR,)), MAX_ERRORS)
    created, modified, last = state_task.workspace_changes(db, namespace, task_id)
    return ([decision_of(e) for e in decisions], [error_of(e) for e in errors],
            WorkspaceChanges(created, modified, last) if created else None)


def context_lines(db: Reader, namespace: str, task_id: str, query: str) -> tuple[list[str], list[str]]:
    """BuildContext's knowledge lines (the namespace's conventions and decisions) and memory lines: with a
    query, the task's entries that match it by full text (best first), then its relevant memories
    (decisions, errors, user instructions, newest first)."""
    knowledge = [f"- [{category.removeprefix('KNOWLEDGE_CATEGORY_').lower()}] {key}: {value}"
                 for category, key, value in state_task.namespace_knowledge(db, namespace, CONTEXT_KNOWLEDGE,
                                                                            KNOWLEDGE_LINES)]
    if not task_id:
        return knowledge, []
    found = state_task.search_task_memories(db, namespace, task_id, query, MEMORY_LINES) if query else []
    found += [(e.type.value, e.summary) for e in relevant_entries(db, namespace, task_id, "", MEMORY_LINES)]
    lines = [f"- [{kind.removeprefix('MEMORY_TYPE_').lower()}] {summary}" for kind, summary in found]
    return knowledge, list(dict.fromkeys(lines))
