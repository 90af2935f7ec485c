"""The maintenance loop: at start-up and every configured interval, stuck alerts, auto-pause,
auto-archive, episode retention, the retention of finished webhook deliveries, and the deletion of expired
memory entries, messages, episodes, action log lines, checkpoints and store items, with the stripping of events to tombstones
(store/expired_items.py).

What to do to a task is decided by core/maintenance_chores.chore_for; each action is one
write (store/tasks/chores.py) that re-checks the task inside its transaction, so a task
updated meanwhile is left alone. Old episodes are archived a page per write. Every
action on a task or an episode emits an event; no episode is deleted unless
episode_retention_delete says so. Webhook delivery rows are bookkeeping (the events stay in
the log): finished ones are deleted past their retention, without events.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter

from taskmem.core.errors import StorageFull
from taskmem.core.ids import new_id, now_us
from taskmem.core.maintenance_chores import Chore, Policy, chore_for
from taskmem.core.retention import Kind as RetentionKind
from taskmem.settings import MaintenanceSettings
from taskmem.store import expired_items
from taskmem.store.checkpoints import checkpoints as checkpoint_store
from taskmem.store.memory import store_items as store_item_store
from taskmem.store.tasks import chores as chore_store
from taskmem.store.webhooks import webhooks as webhook_store
from taskmem.store.storage import Storage
from taskmem.store.storage import WriterClosed
from taskmem.store.access import Transaction

log = logging.getLogger(__name__)


def policy_of(settings: MaintenanceSettings) -> Policy:
    return Policy.from_seconds(settings.stuck_after_seconds, settings.stuck_alert_cooldown_seconds,
                               settings.auto_pause_after_seconds, settings.auto_archive_after_seconds,
                               settings.episode_retention_seconds, settings.episode_retention_delete,
                               settings.webhook_delivered_retention_seconds,
                               settings.webhook_dead_letter_retention_seconds)


class MaintenanceLoop:
    def __init__(self, storage: Storage, settings: MaintenanceSettings) -> None:
        self._storage = storage
        self._interval = settings.interval_seconds
        self._policy = policy_of(settings)
        self._delete_page = settings.retention_delete_page
        self._retention = settings.retention
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
            except StorageFull as error:
                log.warning("maintenance paused until its next run in %ss: %s", self._interval, error.metadata["detail"])
            except Exception:
                log.exception("maintenance run failed; trying again in %ss", self._interval)
            await asyncio.sleep(self._interval)

    async def run_once(self) -> Counter[Chore]:
        """One pass over every namespace; returns how many of each chore were done."""
        done = await self._tend_tasks()
        done[self._policy.episode_chore] += await self._retire_episodes()
        done[Chore.PRUNE_WEBHOOK_DELIVERY] += await self._prune_webhook_deliveries()
        done += await self._delete_expired()
        return +done

    async def _delete_expired(self) -> Counter[Chore]:
        """Expired memory entries, messages, episodes, action log lines, events, checkpoints and store items deleted
        and the events of the first three stripped, a page of each per write, so the writer's other work waits at most one page; reads have left
        them out since they expired."""
        done: Counter[Chore] = Counter()
        correlation_id = new_id("cor")
        page = self._delete_page

        def sweep(tx: Transaction) -> Counter[Chore]:
            cutoff = self._retention.log_cutoff(tx.namespace, tx.now)
            events_before = self._retention.event_cutoff(tx.namespace, tx.now)
            return Counter({Chore.DELETE_EXPIRED_MEMORY_ENTRY: expired_items.delete_expired_entries(tx, page),
                            Chore.DELETE_EXPIRED_MESSAGE: expired_items.delete_expired_messages(tx, page),
                            Chore.DELETE_EXPIRED_EPISODE: expired_items.delete_expired_episodes(tx, page),
                            Chore.STRIP_EXPIRED_EVENT: expired_items.strip_expired_events(tx, page),
                            Chore.DELETE_EXPIRED_LOG_LINE: expired_items.delete_expired_log_lines(tx, cutoff, page),
                            Chore.DELETE_EXPIRED_EVENT: expired_items.delete_old_events(tx, events_before, page),
                            Chore.DELETE_EXPIRED_CHECKPOINT: checkpoint_store.delete_expired(tx, page),
                            Chore.DELETE_EXPIRED_STORE_ITEM: store_item_store.delete_expired(tx, page)})

        now = now_us()
        namespaces = set(await self._storage.read(expired_items.namespaces_with_expired, now))
        namespaces.update(await self._storage.read(checkpoint_store.namespaces_with_expired, now))
        namespaces.update(await self._storage.read(store_item_store.namespaces_with_expired, now))
        shortest = self._retention.shortest_ttl_us(RetentionKind.ACTION_LOGS)
        if shortest:
            namespaces.update(await self._storage.read(expired_items.namespaces_with_old_log_lines, now - shortest))
        if self._retention.shortest_ttl_us(RetentionKind.EVENTS):
            namespaces.update(await self._storage.read(expired_items.namespaces_with_events))
        for namespace in sorted(namespaces):
            while True:
                swept = await self._storage.write(sweep, namespace, correlation_id)
                done += swept
                if max(swept.values()) < page:
                    break
        return done

    async def _prune_webhook_deliveries(self) -> int:
        cutoffs = self._policy.webhook_delivery_cutoffs(now_us())
        if not cutoffs:
            return 0
        correlation_id = new_id("cor")
        pruned = 0
        for namespace in await self._storage.read(webhook_store.namespaces_with_old_deliveries, cutoffs):
            while True:  # a page per write, so the writer's other work is never held up for long
                count = await self._storage.write(
                    lambda tx: webhook_store.prune_deliveries(tx, cutoffs, chore_store.PAGE), namespace,
                    correlation_id)
                pruned += count
                if count < chore_store.PAGE:
                    break
        return pruned

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
