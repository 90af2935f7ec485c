"""The claim sweeper: returns the items of expired plan-item claims to PENDING, with their
PLAN_ITEM_CLAIM_EXPIRED events, about a second after the lease ends.

Claimers need no sweeper to be correct (ClaimPlanItem and UpdatePlanItem expire the task's claims
first, under the task's lock); it exists so that the views and the event stream say promptly that an
agent lost its item. Each pass reads the claims whose lease ended, then expires them with one write
per task (store/tasks/plan_claims.expire_due re-checks under the lock, so a renewal that came first wins).
On PostgreSQL it runs on one replica at a time (Storage.run_alone).
"""

from __future__ import annotations

import asyncio
import logging

from taskmem.core.ids import new_id, now_us
from taskmem.store.tasks import plan_claims
from taskmem.store.storage import Storage, WriterClosed

log = logging.getLogger(__name__)

# How often to look: an expired claim's item is back within this much of the lease's end.
SWEEP_SECONDS = 0.5
# Tasks per pass; more wait for the next pass, half a second later.
SWEEP_TASKS = 200


class PlanClaimSweeper:
    def __init__(self, storage: Storage, interval: float = SWEEP_SECONDS) -> None:
        self._storage = storage
        self._interval = interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="taskmem-plan-claim-sweeper")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await self.sweep_once()
            except WriterClosed:
                return
            except Exception:
                log.exception("sweeping expired plan-item claims failed; trying again in %ss", self._interval)
            await asyncio.sleep(self._interval)

    async def sweep_once(self) -> int:
        """Expire every claim whose lease has ended; returns how many tasks had one."""
        due = await self._storage.read(plan_claims.due_claims, now_us(), SWEEP_TASKS)
        correlation_id = new_id("cor")
        for namespace, task_id in due:
            await self._storage.write(lambda tx, task_id=task_id: plan_claims.expire_due(tx, task_id),
                                      namespace, correlation_id)
        return len(due)
