"""The link between a state item and the memory entries (AddDecision, AddError) that stated it."""

from __future__ import annotations

import dataclasses

from taskmem.core.memory import MemoryType
from taskmem.core.state_notes import DECISION_KIND, ERROR_KIND, EntryLink
from taskmem.store.access import Reader, Transaction

_DECISION, _ERROR = MemoryType.DECISION.value, MemoryType.ERROR.value


def link_entry(tx: Transaction, thread_id: str, link: EntryLink) -> None:
    tx.execute("INSERT INTO state_item_entries (namespace, thread_id, uid, memory_entry_id, kind, subtask_id,"
               " detail, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (tx.namespace, thread_id, link.uid, link.memory_entry_id, link.kind, link.subtask_id, link.detail,
                link.created_at))


def thread_links(db: Reader, namespace: str, thread_id: str) -> list[EntryLink]:
    """Every link of the thread, oldest first."""
    rows = db.fetchall("SELECT uid, memory_entry_id, kind, subtask_id, detail, created_at FROM state_item_entries"
                       " WHERE namespace = ? AND thread_id = ? ORDER BY created_at, memory_entry_id",
                       (namespace, thread_id))
    return [EntryLink(row[0], row[1], row[2], row[3], row[4], row[5]) for row in rows]


@dataclasses.dataclass(frozen=True)
class Unlinked:
    """A decision or error AddDecision/AddError recorded before its state item existed."""

    namespace: str
    memory_entry_id: str
    task_id: str
    kind: str
    text: str
    subtask_id: str
    detail: str
    created_at: int


def unlinked_statements(db: Reader, limit: int) -> list[Unlinked]:
    """The oldest `limit` decision and error entries written by StateService (source 'state') that no state
    item links to yet (databases from before issue 11), of every namespace."""
    rows = db.fetchall(
        "SELECT m.namespace, m.id, m.task_id, m.type, m.summary, m.subtask_id, m.detail, m.created_at"
        " FROM memory_entries m WHERE m.source = 'state' AND m.type IN (?, ?) AND NOT EXISTS ("
        " SELECT 1 FROM state_item_entries l WHERE l.namespace = m.namespace AND l.memory_entry_id = m.id)"
        " ORDER BY m.created_at, m.seq LIMIT ?", (_DECISION, _ERROR, limit))
    return [Unlinked(r[0], r[1], r[2], DECISION_KIND if r[3] == _DECISION else ERROR_KIND, r[4], r[5], r[6], r[7])
            for r in rows]


def superseded_entries(db: Reader, namespace: str, entry_ids: list[str], at: int | None) -> dict[str, int]:
    """memory entry id → when its decision stopped holding, for the decision entries among entry_ids whose
    state item was superseded by `at` (None: by now)."""
    if not entry_ids:
        return {}
    rows = db.fetchall(
        "SELECT e.memory_entry_id, i.valid_to FROM state_item_entries e JOIN state_items i"
        " ON i.namespace = e.namespace AND i.thread_id = e.thread_id AND i.uid = e.uid"
        f" WHERE e.namespace = ? AND e.kind = ? AND e.memory_entry_id IN ({','.join('?' * len(entry_ids))})"
        " AND i.valid_to IS NOT NULL AND i.valid_to <= ?",
        (namespace, DECISION_KIND, *entry_ids, at if at is not None else 2**63 - 1))
    return {row[0]: int(row[1]) for row in rows}
