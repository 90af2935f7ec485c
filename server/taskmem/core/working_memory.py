"""Working memory (seed 003): one small document per agent, held in the server's memory.

Cheap to read and write (no database on the request path); the server writes every
document to the database on graceful shutdown and loads them back at start-up.
Each namespace sees only its own agents.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from taskmem.core.errors import StaleEtag


@dataclasses.dataclass
class WorkingMemory:
    agent_id: str
    current_plan: str = ""
    active_constraints: list[str] = dataclasses.field(default_factory=list)
    task_context: dict[str, Any] = dataclasses.field(default_factory=dict)
    scratchpad: list[str] = dataclasses.field(default_factory=list)
    updated_at: int = 0
    revision: int = 0  # 0: never written

    @property
    def etag(self) -> str:
        return f'W/"{self.revision}"' if self.revision else ""

    def to_document(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> WorkingMemory:
        return cls(**{f.name: document[f.name] for f in dataclasses.fields(cls) if f.name in document})


class WorkingMemories:
    """Every agent's working memory, by (namespace, agent_id)."""

    def __init__(self) -> None:
        self._memories: dict[tuple[str, str], WorkingMemory] = {}

    def get(self, namespace: str, agent_id: str) -> WorkingMemory:
        found = self._memories.get((namespace, agent_id))
        return dataclasses.replace(found) if found else WorkingMemory(agent_id)

    def put(self, namespace: str, memory: WorkingMemory, etag: str, now: int) -> WorkingMemory:
        """Replace the agent's document; a non-empty etag must be the current one (AIP-154)."""
        current = self._memories.get((namespace, memory.agent_id))
        current_etag = current.etag if current else ""
        if etag and etag != current_etag:
            raise StaleEtag(f"etag {etag} is stale: working memory of {memory.agent_id} is at "
                            f"{current_etag or 'nothing'}; read it again")
        stored = dataclasses.replace(memory, updated_at=now, revision=(current.revision if current else 0) + 1)
        self._memories[(namespace, memory.agent_id)] = stored
        return dataclasses.replace(stored)

    def snapshot(self) -> list[tuple[str, WorkingMemory]]:
        return [(namespace, memory) for (namespace, _), memory in self._memories.items()]

    def restore(self, entries: list[tuple[str, WorkingMemory]]) -> None:
        for namespace, memory in entries:
            self._memories[(namespace, memory.agent_id)] = memory
