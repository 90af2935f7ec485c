"""Working memory rows: one JSON document per (namespace, agent id)."""

from __future__ import annotations

import json

from taskmem.core.working_memory import WorkingMemory
from taskmem.store.access import Reader, Transaction


def load(db: Reader, namespace: str, agent_id: str) -> WorkingMemory | None:
    row = db.fetchone("SELECT document FROM working_memories WHERE namespace = ? AND agent_id = ?",
                      (namespace, agent_id))
    return WorkingMemory.from_document(json.loads(row["document"])) if row else None


def agent_count(db: Reader, namespace: str) -> int:
    row = db.fetchone("SELECT count(*) FROM working_memories WHERE namespace = ?", (namespace,))
    return int(row[0]) if row else 0


def save(tx: Transaction, memory: WorkingMemory, document: str) -> None:
    """Insert or replace the agent's row in the transaction's namespace."""
    tx.execute(
        "INSERT INTO working_memories (namespace, agent_id, document, updated_at) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (namespace, agent_id) DO UPDATE SET document = excluded.document,"
        " updated_at = excluded.updated_at",
        (tx.namespace, memory.agent_id, document, memory.updated_at))
