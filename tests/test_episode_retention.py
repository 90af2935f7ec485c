"""Episode retention: episodes past episode_retention_seconds are archived (or, only when
configured, deleted) by the maintenance loop, each with its event; newer ones are left alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from taskmem.api.event_encoding import event_payload
from taskmem.config import Config
from taskmem.core.events import EventFilter, EventType
from taskmem.core.ids import now_us
from taskmem.core.maintenance_chores import Chore
from taskmem.maintenance_loop import MaintenanceLoop
from taskmem.settings import MaintenanceSettings
from taskmem.store.engines import open_storage
from taskmem.store.storage import Storage
from taskmem.store.access import Reader, Transaction

DAY_US = 24 * 3600 * 1_000_000


@pytest.fixture
async def storage(tmp_path: Path) -> AsyncIterator[Storage]:
    opened = await open_storage(str(tmp_path / "taskmem.db"), event_payload)
    yield opened
    await opened.close()


async def add_episode(storage: Storage, namespace: str, episode_id: str, age_days: float) -> None:
    def insert(tx: Transaction) -> None:
        tx.execute("INSERT INTO episodes (namespace, id, task_id, agent_id, action, approach, created_at)"
                   " VALUES (?, ?, 'tsk_1', 'coder', 'EPISODE_ACTION_FAILED', 'retry the build', ?)",
                   (namespace, episode_id, tx.now - int(age_days * DAY_US)))
    await storage.write(insert, namespace, "cor_test")


async def episodes(storage: Storage, namespace: str) -> dict[str, int | None]:
    def query(db: Reader) -> dict[str, int | None]:
        rows = db.fetchall("SELECT id, archived_at FROM episodes WHERE namespace = ?", (namespace,))
        return {row["id"]: row["archived_at"] for row in rows}
    return await storage.read(query)


async def event_types(storage: Storage, namespace: str) -> list[EventType]:
    return [event.type for event in await storage.events.list(EventFilter(namespace), 0, 100)]


async def test_episodes_past_retention_are_archived_with_an_event_and_kept(storage: Storage) -> None:
    await add_episode(storage, "default", "epi_old", age_days=31)
    await add_episode(storage, "default", "epi_new", age_days=29)
    await add_episode(storage, "team-b", "epi_old_b", age_days=45)
    loop = MaintenanceLoop(storage, MaintenanceSettings.of(Config(episode_retention_seconds=30 * 24 * 3600)))

    before = now_us()
    done = await loop.run_once()

    assert done[Chore.ARCHIVE_EPISODE] == 2
    kept = await episodes(storage, "default")
    assert kept["epi_new"] is None
    assert kept["epi_old"] is not None and kept["epi_old"] >= before
    assert (await episodes(storage, "team-b"))["epi_old_b"] is not None
    assert (await event_types(storage, "default")).count(EventType.EPISODE_ARCHIVED) == 1
    assert (await loop.run_once())[Chore.ARCHIVE_EPISODE] == 0, "an archived episode is archived once"


async def test_episodes_are_deleted_only_when_retention_says_delete(storage: Storage) -> None:
    await add_episode(storage, "default", "epi_old", age_days=31)
    await add_episode(storage, "default", "epi_new", age_days=1)
    loop = MaintenanceLoop(storage, MaintenanceSettings.of(Config(episode_retention_seconds=30 * 24 * 3600, episode_retention_delete=True)))

    done = await loop.run_once()

    assert done[Chore.DELETE_EPISODE] == 1
    assert await episodes(storage, "default") == {"epi_new": None}
    assert EventType.EPISODE_DELETED in await event_types(storage, "default")


async def test_retention_of_zero_keeps_every_episode(storage: Storage) -> None:
    await add_episode(storage, "default", "epi_ancient", age_days=3650)
    loop = MaintenanceLoop(storage, MaintenanceSettings.of(Config(episode_retention_seconds=0)))

    assert not await loop.run_once()
    assert await episodes(storage, "default") == {"epi_ancient": None}
