"""Working memory's engine: each put is one write of the agent's row, each get one read; nothing is kept in RAM."""

from __future__ import annotations

from taskmem.core.working_memory import WorkingMemory, check_size, document_json, replaced
from taskmem.store.memory import working_memory as store
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction


class WorkingMemoryEngine:
    def __init__(self, storage: Storage, max_bytes: int, max_agents: int) -> None:
        self._storage = storage
        self._max_bytes = max_bytes
        self._max_agents = max_agents

    async def get(self, namespace: str, agent_id: str) -> WorkingMemory:
        """The agent's document, or an empty one (revision 0) if it never wrote one."""
        found = await self._storage.read(store.load, namespace, agent_id)
        return found or WorkingMemory(agent_id)

    async def put(self, namespace: str, correlation_id: str, memory: WorkingMemory, etag: str) -> WorkingMemory:
        """Replace the agent's document; acknowledged only once committed."""
        check_size(memory, self._max_bytes)  # refused before it queues for the writer

        def put(tx: Transaction) -> WorkingMemory:
            current = store.load(tx, tx.namespace, memory.agent_id)
            agents = store.agent_count(tx, tx.namespace) if current is None else 0
            stored = replaced(current, memory, etag, tx.now, agents, self._max_agents)
            store.save(tx, stored, document_json(stored))
            return stored

        return await self._storage.write(put, namespace, correlation_id)
