"""Which polled waits this replica looks at, when replicas share one database.

Each replica's scheduler tracks every open wait; before looking at an http or file target it must hold
the wait's claim (store/waits/wait_claims.py). A claim lasts `seconds` (the storage's lease time) and all of a
replica's claims are renewed together every third of it, so holding a thousand waits costs one write per
renewal, not one per look. This replica counts a claim as held only until `seconds - seconds / 6` after
the write that last took or renewed it began, so a renewal that failed (the database unreachable, this
process stalled) stops its looks before a peer may take the wait over; the sixth of margin covers clocks
that differ a little between machines. A replica that dies stops renewing; the others, which asked for its
waits and were told when the claims end, ask again then and take them over within the lease time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable

from taskmem.core.ids import new_id, now_us
from taskmem.store.waits import wait_claims
from taskmem.store.storage import Storage, WriterClosed

log = logging.getLogger(__name__)

Key = tuple[str, str]
# A wait being claimed by another replica at this very moment is asked for again after this long.
BUSY_RETRY_US = 1_000_000


class WaitClaims:
    def __init__(self, storage: Storage, seconds: float) -> None:
        self._storage = storage
        self._seconds = seconds
        self.holder = new_id("rep")
        self._held_until: dict[Key, float] = {}  # monotonic time this replica stops counting the claim as held
        self._renewing: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._renewing = asyncio.create_task(self._renew_forever(), name="taskmem-wait-claims")

    async def stop(self) -> None:
        """Stop renewing and give every claim up, so the other replicas take the waits over at their next ask."""
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
        if self._held_until:
            self._held_until.clear()
            with contextlib.suppress(WriterClosed):
                await self._storage.write(lambda tx: wait_claims.release_claims(tx, self.holder), "", "wait-claims")

    def holds(self, key: Key) -> bool:
        until = self._held_until.get(key)
        return until is not None and time.monotonic() < until

    def drop(self, key: Key) -> None:
        """The wait ended (or is no longer tracked): forget its claim (its row, no longer WAITING, frees itself)."""
        self._held_until.pop(key, None)

    async def claim(self, keys: Iterable[Key]) -> tuple[list[Key], dict[Key, int]]:
        """Claim what is free among keys: the keys now held, and when (µs) to ask again for each of the others
        still open. Ended waits are in neither."""
        asked = list(keys)
        began = time.monotonic()
        claimed, retry = await self._storage.write(
            lambda tx: wait_claims.claim_waits(tx, asked, self.holder, self._seconds), "", "wait-claims")
        until = self._valid_from(began)
        for key in claimed:
            self._held_until[key] = until
        soonest = now_us() + BUSY_RETRY_US
        return claimed, {key: max(at, soonest) for key, at in retry.items()}

    def _valid_from(self, began: float) -> float:
        return began + self._seconds - self._seconds / 6

    async def _renew_forever(self) -> None:
        while True:
            await asyncio.sleep(self._seconds / 3)
            if not self._held_until:
                continue
            began = time.monotonic()
            try:
                still = await self._storage.write(
                    lambda tx: wait_claims.renew_claims(tx, self.holder, self._seconds), "", "wait-claims")
            except WriterClosed:
                return
            except Exception as error:  # unreachable database: the claims lapse here by themselves (holds())
                log.warning("renewing %d wait claims failed (%s)", len(self._held_until), error)
                continue
            until = self._valid_from(began)
            # Ended, or taken over after a renewal came too late; a claim taken after this renewal began
            # (its write may have run after the renewal's) is not judged by it.
            lost = [key for key, held in self._held_until.items() if key not in still and held <= until]
            for key in lost:
                del self._held_until[key]
            for key in still:
                if key in self._held_until:
                    self._held_until[key] = max(self._held_until[key], until)
