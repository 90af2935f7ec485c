"""The link between a state item and the memory entries (AddDecision, AddError) that stated it."""

from __future__ import annotations

from taskmem.core.state_notes import EntryLink
from taskmem.store.writer import Reader, Transaction


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
