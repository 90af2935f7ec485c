"""Claims on polled waits, for replicas on one PostgreSQL database (columns of PostgreSQL migration 0004_work_claims).

Every replica tracks every open wait, but an http or file target is looked at only by the replica
holding the wait's claim: `claim_waits` takes the free or expired claims among the waits asked for
(`FOR UPDATE SKIP LOCKED`: a row another replica is claiming at this moment is skipped, not waited
for), `renew_claims` extends all of a holder's open claims in one statement, `release_claims` gives
them up on a graceful stop. Only the scheduler of a shared (PostgreSQL) storage calls these; SQLite's
one process looks at every wait itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskmem.core.waits import WaitStatus
from taskmem.store.access import Transaction

Key = tuple[str, str]  # (namespace, wait id)


def _keys_sql(keys: Sequence[Key]) -> tuple[str, list[str]]:
    return ", ".join("(?, ?)" for _ in keys), [part for key in keys for part in key]


def claim_waits(tx: Transaction, keys: Sequence[Key], holder: str, seconds: float) -> tuple[list[Key], dict[Key, int]]:
    """Claim (or renew) those of the open waits `keys` that are free, expired or the holder's own, for
    `seconds`. Returns the keys claimed, and for each other open wait the time (µs) its claim ends, when
    asking again may succeed (a wait being claimed elsewhere right now: now). Ended waits are in neither."""
    tx.quiet = True  # claims show in no view
    if not keys:
        return [], {}
    listed, params = _keys_sql(keys)
    claimed = tx.fetchall(
        f"WITH free AS (SELECT namespace, id FROM waits WHERE status = ? AND (namespace, id) IN ({listed})"
        f" AND (claimed_by IS NULL OR claimed_by = ? OR claim_expires_at < ?) FOR UPDATE SKIP LOCKED)"
        f" UPDATE waits SET claimed_by = ?, claim_expires_at = ? FROM free"
        f" WHERE waits.namespace = free.namespace AND waits.id = free.id RETURNING waits.namespace, waits.id",
        [WaitStatus.WAITING.value, *params, holder, tx.now, holder, tx.now + int(seconds * 1_000_000)])
    mine = [(str(row[0]), str(row[1])) for row in claimed]
    taken = set(mine)
    others = tx.fetchall(f"SELECT namespace, id, claim_expires_at FROM waits WHERE status = ?"
                         f" AND (namespace, id) IN ({listed})", [WaitStatus.WAITING.value, *params])
    retry = {(str(row[0]), str(row[1])): max(int(row[2] or 0), tx.now) for row in others
             if (str(row[0]), str(row[1])) not in taken}
    return mine, retry


def renew_claims(tx: Transaction, holder: str, seconds: float) -> set[Key]:
    """Extend every open claim of the holder; returns the waits it still holds (one taken over after the
    holder failed to renew in time, or ended, is not among them)."""
    tx.quiet = True  # claims show in no view
    rows = tx.fetchall("UPDATE waits SET claim_expires_at = ? WHERE claimed_by = ? AND status = ?"
                       " RETURNING namespace, id", (tx.now + int(seconds * 1_000_000), holder, WaitStatus.WAITING.value))
    return {(str(row[0]), str(row[1])) for row in rows}


def release_claims(tx: Transaction, holder: str) -> None:
    """Give up every open claim of the holder, so the other replicas may take its waits at once."""
    tx.quiet = True  # claims show in no view
    tx.execute("UPDATE waits SET claimed_by = NULL, claim_expires_at = NULL WHERE claimed_by = ? AND status = ?",
               (holder, WaitStatus.WAITING.value))
