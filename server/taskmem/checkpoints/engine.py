"""The data plane between CheckpointService and the store: one transaction per call, the namespace's
retention applied to each put, and the reads on a consistent snapshot."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from taskmem.core.checkpoints import Checkpoint, PendingWrite, PruneStrategy
from taskmem.core.errors import NotFound
from taskmem.core.ids import now_us
from taskmem.core.retention import Retention
from taskmem.core.tasks import Task
from taskmem.store.access import Transaction
from taskmem.store.checkpoints import checkpoints as store
from taskmem.store.storage import Storage

# As TaskService's limit on a task's name.
NAME_MAX = 200


class CheckpointEngine:
    def __init__(self, storage: Storage, retention: Retention) -> None:
        self.storage = storage
        self.retention = retention

    def put(self, tx: Transaction, checkpoint: Checkpoint, task_id: str) -> Checkpoint:
        expires = self.retention.checkpoint_expiry(tx.namespace, tx.now)
        return store.put_checkpoint(tx, checkpoint, task_id, NAME_MAX, expires)

    async def put_writes(self, namespace: str, correlation_id: str, thread_id: str, checkpoint_ns: str,
                         checkpoint_id: str, writes: Sequence[PendingWrite]) -> int:
        return await self.storage.write(
            lambda tx: store.put_writes(tx, thread_id, checkpoint_ns, checkpoint_id, writes, NAME_MAX),
            namespace, correlation_id)

    async def get(self, namespace: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> Checkpoint:
        found = await self.storage.read(store.get_checkpoint, namespace, thread_id, checkpoint_ns, checkpoint_id,
                                        now_us())
        if found is None:
            raise NotFound("checkpoint", f"{thread_id}/{checkpoint_ns}/{checkpoint_id or '(newest)'}")
        return found

    async def list(self, namespace: str, after_key: list[Any] | None, limit: int, **query: Any) -> list[Checkpoint]:
        return await self.storage.read(
            lambda db: store.list_checkpoints(db, namespace, now_us(), after_key=after_key, limit=limit, **query))

    async def delete_thread(self, namespace: str, correlation_id: str, thread_id: str) -> int:
        return await self.storage.write(lambda tx: store.delete_thread(tx, thread_id), namespace, correlation_id)

    async def delete_runs(self, namespace: str, correlation_id: str, run_ids: Sequence[str]) -> int:
        return await self.storage.write(lambda tx: store.delete_runs(tx, run_ids), namespace, correlation_id)

    def copy(self, tx: Transaction, source: str, target: str, up_to: str, name: str) -> tuple[Task, int]:
        return store.copy_thread(tx, source, target, up_to, name, NAME_MAX)

    async def prune(self, namespace: str, correlation_id: str, thread_ids: Sequence[str],
                    strategy: PruneStrategy) -> int:
        return await self.storage.write(lambda tx: store.prune(tx, thread_ids, strategy), namespace, correlation_id)
