"""Background services under leases on PostgreSQL (whatever --engine says): one replica runs each, and
another takes it over within the lease time when that replica is killed, or at once when it stops."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from taskmem.api.event_encoding import event_payload
from taskmem.store.postgres.leases import LEASE_SECONDS, holder_of
from taskmem.store.engines import open_storage
from tests.support.postgres import database_url
from tests.support.eventually import HANG_GUARD_SECONDS
from tests.support.server_process import ServerOnDatabase



async def until(condition, seconds: float) -> None:  # type: ignore[no-untyped-def]
    """Returns once condition() holds; fails after `seconds`, a hang guard only (how soon is the machine's)."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < seconds, "never happened"
        await asyncio.sleep(0.05)


async def test_a_killed_replicas_service_is_taken_over_once_its_lease_expires(tmp_path: Path) -> None:
    url = database_url(str(tmp_path / "leases"))
    first = ServerOnDatabase(url)
    first.start()  # it claims "maintenance" as it starts
    storage = await open_storage(url, event_payload)
    try:
        assert await storage.read(holder_of, "maintenance") is not None
        runs: list[str] = []
        await storage.run_alone("maintenance", lambda: runs.append("started"), lambda: runs.append("stopped"))
        await asyncio.sleep(1.0)
        assert runs == []  # the live replica holds it
        first.stop(signal.SIGKILL)
        await until(lambda: runs == ["started"], 3 * LEASE_SECONDS + 120)
    finally:
        await storage.close()


async def test_one_of_two_processes_runs_a_service_and_the_other_takes_over_when_it_stops(tmp_path: Path) -> None:
    url = database_url(str(tmp_path / "handover"))
    one, two = await open_storage(url, event_payload), await open_storage(url, event_payload)
    runs: list[str] = []
    try:
        await one.run_alone("webhooks", lambda: runs.append("one"), lambda: runs.append("one stopped"))
        await until(lambda: runs == ["one"], HANG_GUARD_SECONDS)
        await two.run_alone("webhooks", lambda: runs.append("two"), lambda: runs.append("two stopped"))
        await asyncio.sleep(1.0)
        assert runs == ["one"]
        held_by = await two.read(holder_of, "webhooks")
        assert held_by is not None
        await one.close()  # stops the service and gives the lease up: no waiting for it to expire
        assert await two.read(holder_of, "webhooks") != held_by
        await until(lambda: runs == ["one", "one stopped", "two"], 3 * LEASE_SECONDS + 120)
    finally:
        await two.close()
