"""Leases: a background service that must run once across replicas runs on the replica holding its lease.

A replica claims a lease row (an upsert that succeeds only if the row is free, expired or its own)
and renews it every third of the lease time while it runs the service. A replica that cannot renew
in time stops the service (it may have been taken over); one that dies stops renewing, and another
replica's next claim after the expiry takes the service over, so work resumes within one lease time.
On a graceful stop the row is deleted and a peer takes over at its next claim.

The claim is a write through the replica's group-commit writer; a service's own writes are not
fenced by the lease, so for a moment around a takeover two replicas may both work: the services
run under leases are at-least-once already (webhooks resend with the same webhook-id; chores
re-check their task under its row lock).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from taskmem.core.ids import new_id, now_us
from taskmem.store.access import Reader, Transaction

log = logging.getLogger(__name__)

LEASE_SECONDS = 10.0


def claim(tx: Transaction, name: str, holder: str, seconds: float) -> bool:
    """Take or renew the lease; False while another holder's lease is unexpired."""
    tx.quiet = True  # leases show in no view
    row = tx.fetchone(
        "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET"
        " holder = excluded.holder, expires_at = excluded.expires_at"
        " WHERE leases.holder = excluded.holder OR leases.expires_at < ? RETURNING holder",
        (name, holder, tx.now + int(seconds * 1_000_000), tx.now))
    return row is not None


def release(tx: Transaction, name: str, holder: str) -> None:
    tx.quiet = True  # leases show in no view
    tx.execute("DELETE FROM leases WHERE name = ? AND holder = ?", (name, holder))


def holder_of(db: Reader, name: str) -> str | None:
    row = db.fetchone("SELECT holder FROM leases WHERE name = ? AND expires_at >= ?", (name, now_us()))
    return str(row[0]) if row else None


Service = Callable[[], Awaitable[None] | None]


async def _call(function: Service) -> None:
    result = function()
    if inspect.isawaitable(result):
        await result


class LeasedService:
    """Runs start() while this replica holds the lease `name`, stop() when it no longer does."""

    def __init__(self, write: Callable[..., Awaitable[Any]], name: str, start: Service, stop: Service,
                 seconds: float = LEASE_SECONDS) -> None:
        self._write = write
        self.name = name
        self.holder = new_id("rep")
        self._start, self._stop = start, stop
        self._seconds = seconds
        self.running = False
        self._task = asyncio.create_task(self._keep(), name=f"taskmem-lease-{name}")

    async def _claim(self) -> bool:
        try:
            # asyncio.timeout, not wait_for: Python 3.11's wait_for swallows a cancellation that arrives as the
            # claim's write completes, and close() would then wait forever on a loop that goes on claiming (a
            # refused start-up on PostgreSQL hung so in one CI run: the one unbounded wait on its way out).
            async with asyncio.timeout(self._seconds / 3):
                claimed: bool = await self._write(lambda tx: claim(tx, self.name, self.holder, self._seconds),
                                                  "", "lease")
            return claimed
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the database is unreachable: this replica cannot know it still holds it
            log.warning("lease %s: claim failed (%s)", self.name, error)
            return False

    async def _keep(self) -> None:
        while True:
            held = await self._claim()
            if held and not self.running:
                log.info("lease %s: this replica runs it", self.name)
                await _call(self._start)
                self.running = True
            elif not held and self.running:
                log.warning("lease %s: lost; stopping here", self.name)
                self.running = False
                await _call(self._stop)
            await asyncio.sleep(self._seconds / 3)

    async def close(self, release_lease: bool = True) -> None:
        """Stop claiming; give the lease up so a peer takes over at its next claim. The service itself is
        stopped by its owner, and here too if it runs: a claim can start it after its owner stopped it (a
        refused start-up stops everything while the first claim is in flight), and it must not outlive the
        storage it reads."""
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self.running:
            await _call(self._stop)
        if release_lease and self.running:
            with contextlib.suppress(Exception):
                await self._write(lambda tx: release(tx, self.name, self.holder), "", "lease")
