"""The maintenance loop: at start-up and every configured interval, stuck alerts, auto-pause,
auto-archive and episode retention.

What to do to a task is decided by core/maintenance.chore_for; each action is one
write (store/chores) that re-checks the task inside its transaction, so a task
updated meanwhile is left alone. Old episodes are archived a page per write. Every
action emits an event; nothing is deleted unless episode_retention_delete says so.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from taskmem.config import Config
from taskmem.core.ids import new_id, now_us
from taskmem.core.maintenance import Chore, Policy, chore_for
from taskmem.store import chores as chore_store
from taskmem.store.storage import Storage
from taskmem.store.storage import WriterClosed

log = logging.getLogger(__name__)


def policy_of(config: Config) -> Policy:
    return Policy.from_seconds(config.stuck_after_seconds, config.stuck_alert_cooldown_seconds,
                               config.auto_pause_after_seconds, config.auto_archive_after_seconds,
                               config.episode_retention_seconds, config.episode_retention_delete)


class MaintenanceLoop:
    def __init__(self, storage: Storage, config: Config) -> None:
        self._storage = storage
        self._interval = config.maintenance_interval_seconds
        self._policy = policy_of(config)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._interval > 0:
            self._task = asyncio.create_task(self._run(), name="taskmem-maintenance")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                done = await self.run_once()
                if done:
                    log.info("maintenance: %s", ", ".join(f"{n} {chore.value}" for chore, n in done.items()))
            except WriterClosed:
                return
            except Exception:
                log.exception("maintenance run failed; trying again in %ss", self._interval)
            await asyncio.sleep(self._interval)

    async def run_once(self) -> Counter[Chore]:
        """One pass over every namespace; returns how many of each chore were done."""
        done = await self._tend_tasks()
        done[self._policy.episode_chore] += await self._retire_episodes()
        return +done

    async def _retire_episodes(self) -> int:
        correlation_id = new_id("cor")
        retired = 0
        for namespace in await self._storage.read(chore_store.namespaces_with_old_episodes, self._policy,
                                                  now_us()):
            while True:
                count = await self._storage.write(
                    lambda tx: chore_store.retire_old_episodes(tx, self._policy), namespace, correlation_id)
                retired += count
                if count < chore_store.PAGE:
                    break
        return retired

    async def _tend_tasks(self) -> Counter[Chore]:
        done: Counter[Chore] = Counter()
        correlation_id = new_id("cor")
        after = None
        while True:
            now = now_us()
            page = await self._storage.read(chore_store.candidates, now, self._policy, after)
            writes = []
            for task in page:
                chore = chore_for(task, now, self._policy)
                if chore is not None:
                    mutation = chore_store.MUTATIONS[chore]
                    writes.append((chore, self._storage.write(
                        lambda tx, task_id=task.id, m=mutation: m(tx, task_id, self._policy),
                        task.namespace, correlation_id)))
            results = await asyncio.gather(*(write for _, write in writes), return_exceptions=True)
            for (chore, _), result in zip(writes, results):
                if isinstance(result, WriterClosed):
                    raise result
                if isinstance(result, BaseException):
                    log.error("maintenance %s failed: %s", chore.value, result)
                elif result:
                    done[chore] += 1
            if len(page) < chore_store.PAGE:
                return done
            after = [page[-1].namespace, page[-1].id]
