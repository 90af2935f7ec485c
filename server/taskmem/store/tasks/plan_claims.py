"""Claims of plan items (migration 0019; PostgreSQL 0008): claim, renew, release, expire, and the holder check
of UpdatePlanItem.

Exactly one claimer gets an item: every mutation here that hands out or ends a claim first locks the
task's row (`FOR UPDATE` on PostgreSQL; SQLite's one writer is alone anyway), so claimers of one task on
any replica run one after another and each sees the claims the previous one committed. A renewal touches
only its claim's row: it and an expiry of the same claim serialise on that row, and the expiry deletes
only a claim still past its end (`expires_at <= now`), so a renewal that commits first wins.
"""

from __future__ import annotations

import json

from taskmem.core.claims import Claim, ClaimEvent, ClaimFilter, check_holder, choose_item
from taskmem.core.errors import ClaimNotHeld, NotFound
from taskmem.core.events import EventType
from taskmem.core.plans import ItemStatus, PlanItem, StatusSource, set_item_status
from taskmem.store.tasks import tasks as task_store
from taskmem.store.access import Reader, Transaction

_KEY = "namespace = ? AND task_id = ? AND item_id = ?"
_STATUSES = {status.value: status for status in ItemStatus}


# --- reads ------------------------------------------------------------------------------------

def due_claims(db: Reader, now: int, limit: int) -> list[tuple[str, str]]:
    """(namespace, task id) of tasks with a claim whose lease ended by `now`, soonest first."""
    rows = db.fetchall("SELECT namespace, task_id FROM plan_item_claims WHERE expires_at <= ?"
                       " ORDER BY expires_at LIMIT ?", (now, limit))
    return list(dict.fromkeys((str(row[0]), str(row[1])) for row in rows))


# --- mutations (inside the writer's Transaction) ----------------------------------------------

def _lock_task(tx: Transaction, task_id: str) -> int:
    """Lock the task's row until commit (claimers of the task queue here); returns its plan version."""
    row = tx.fetchone("SELECT plan_version FROM tasks WHERE namespace = ? AND id = ?" + tx.row_lock,
                      (tx.namespace, task_id))
    if row is None:
        raise NotFound("task", task_id)
    return int(row[0])


def _outline(tx: Transaction, task_id: str, version: int) -> list[PlanItem]:
    """What choosing needs of each item: id, ordinal, stage, tool, status, dependencies."""
    rows = tx.fetchall("SELECT id, ordinal, stage, tool_name, status, depends_on FROM plan_items"
                       " WHERE namespace = ? AND task_id = ? AND plan_version = ? ORDER BY ordinal",
                       (tx.namespace, task_id, version))
    return [PlanItem(id=r[0], ordinal=r[1], title="", stage=r[2], tool_name=r[3], status=_STATUSES[r[4]],
                     depends_on=json.loads(r[5]) if r[5] != "[]" else []) for r in rows]


def _load_item(tx: Transaction, task_id: str, version: int, item_id: str) -> PlanItem:
    item = task_store.load_plan_item(tx, tx.namespace, task_id, version, item_id) if version else None
    if item is None:
        raise NotFound("plan item", item_id)
    return item


def _delete(tx: Transaction, task_id: str, claim: Claim) -> None:
    tx.execute(f"DELETE FROM plan_item_claims WHERE {_KEY}", (tx.namespace, task_id, claim.item_id))


def _give_back(tx: Transaction, task_id: str, version: int, item: PlanItem, claim: Claim,
               event: EventType) -> PlanItem:
    """The item of an ended claim back to PENDING (when it is still IN_PROGRESS), with its event."""
    task_store.touch_task(tx, task_id)
    if item.status is ItemStatus.IN_PROGRESS:
        set_item_status(item, ItemStatus.PENDING, tx.now)
        item.status_source, item.status_message_id = StatusSource.EXPLICIT, ""
        task_store.save_plan_item(tx, task_id, version, item)
    item.holder_id = ""
    tx.emit(event, task_id, ClaimEvent(item, version, claim))
    return item


def _expire(tx: Transaction, task_id: str, version: int, claim: Claim) -> bool:
    """End a claim past its lease (returning its IN_PROGRESS item to PENDING with PLAN_ITEM_CLAIM_EXPIRED);
    False when a renewal committed first and it holds on."""
    gone = tx.fetchall(f"DELETE FROM plan_item_claims WHERE {_KEY} AND expires_at <= ? RETURNING item_id",
                       (tx.namespace, task_id, claim.item_id, tx.now))
    if not gone:
        return False
    item = task_store.load_plan_item(tx, tx.namespace, task_id, version, claim.item_id) if version else None
    if item is not None and item.status is ItemStatus.IN_PROGRESS:
        _give_back(tx, task_id, version, item, claim, EventType.PLAN_ITEM_CLAIM_EXPIRED)
    return True


def _settle(tx: Transaction, task_id: str, version: int, items: list[PlanItem]) -> tuple[dict[str, str], bool]:
    """Under the task lock: expire the task's claims past their lease and drop those whose item left
    IN_PROGRESS (or the plan); returns the holders of the claims that stand, by item id, and whether
    anything changed."""
    by_id = {item.id: item for item in items}
    held: dict[str, str] = {}
    changed = False
    for claim in task_store.task_claims(tx, tx.namespace, task_id).values():
        item = by_id.get(claim.item_id)
        if item is None or item.status is not ItemStatus.IN_PROGRESS:
            _delete(tx, task_id, claim)
        elif claim.live(tx.now) or not _expire(tx, task_id, version, claim):
            held[claim.item_id] = claim.holder
            continue
        else:
            item.status = ItemStatus.PENDING
        changed = True
    return held, changed


def claim_plan_item(tx: Transaction, task_id: str, holder: str, lease_us: int,
                    wanted: ClaimFilter) -> tuple[PlanItem | None, Claim | None, int]:
    """ClaimPlanItem: (the item now IN_PROGRESS under the holder's claim, the claim, how many other matching
    items are PENDING or IN_PROGRESS), or (None, None, that count) when nothing matching is ready."""
    version = _lock_task(tx, task_id)
    items = _outline(tx, task_id, version) if version else []
    if wanted.item_id and not any(item.id == wanted.item_id for item in items):
        raise NotFound("plan item", wanted.item_id)
    held, changed = _settle(tx, task_id, version, items)
    chosen, remaining = choose_item(items, held, wanted)
    if chosen is None:
        tx.quiet = not changed  # a claim that found nothing changed nothing: the caches stay
        return None, None, remaining
    task_store.touch_task(tx, task_id)
    item = _load_item(tx, task_id, version, chosen.id)
    set_item_status(item, ItemStatus.IN_PROGRESS, tx.now)
    item.status_source, item.status_message_id, item.holder_id = StatusSource.EXPLICIT, "", holder
    task_store.save_plan_item(tx, task_id, version, item)
    claim = Claim(task_id, item.id, holder, tx.now, tx.now + lease_us)
    tx.execute("INSERT INTO plan_item_claims (namespace, task_id, item_id, holder, claimed_at, expires_at)"
               " VALUES (?, ?, ?, ?, ?, ?)", (tx.namespace, task_id, item.id, holder, claim.claimed_at,
                                             claim.expires_at))
    tx.emit(EventType.PLAN_ITEM_CLAIMED, task_id, ClaimEvent(item, version, claim))
    return item, claim, remaining


def _current(tx: Transaction, task_id: str, item_id: str) -> Claim | None:
    """The item's claim if it stands now (live, item IN_PROGRESS)."""
    row = tx.fetchone("SELECT c.item_id, c.holder, c.claimed_at, c.expires_at FROM plan_item_claims c"
                      " JOIN tasks t ON t.namespace = c.namespace AND t.id = c.task_id"
                      " JOIN plan_items i ON i.namespace = c.namespace AND i.task_id = c.task_id"
                      " AND i.plan_version = t.plan_version AND i.id = c.item_id"
                      f" WHERE c.namespace = ? AND c.task_id = ? AND c.item_id = ? AND c.expires_at > ?"
                      " AND i.status = ?", (tx.namespace, task_id, item_id, tx.now, ItemStatus.IN_PROGRESS.value))
    return task_store.claim_from_row(task_id, row) if row else None


def renew_claim(tx: Transaction, task_id: str, item_id: str, holder: str, lease_us: int) -> Claim:
    """RenewClaim: the holder's standing claim extended to lease_us from now; ClaimNotHeld naming the current
    holder when it no longer holds it. Writes no event: a renewal changes no view."""
    tx.quiet = True
    row = tx.fetchone(f"UPDATE plan_item_claims SET expires_at = ? WHERE {_KEY} AND holder = ? AND expires_at > ?"
                      " RETURNING item_id, holder, claimed_at, expires_at",
                      (tx.now + lease_us, tx.namespace, task_id, item_id, holder, tx.now))
    claim = task_store.claim_from_row(task_id, row) if row else None
    if claim is None or _current(tx, task_id, item_id) is None:
        task_store.load_task(tx, tx.namespace, task_id)  # NOT_FOUND for an unknown task
        current = _current(tx, task_id, item_id)
        raise ClaimNotHeld(item_id, holder, current.holder if current else "")
    return claim


def release_claim(tx: Transaction, task_id: str, item_id: str, holder: str) -> PlanItem:
    """ReleaseClaim: the holder's item back to PENDING, with PLAN_ITEM_CLAIM_RELEASED."""
    version = _lock_task(tx, task_id)
    item = _load_item(tx, task_id, version, item_id)
    claim = check_holder(item_id, holder, _current(tx, task_id, item_id))
    _delete(tx, task_id, claim)
    return _give_back(tx, task_id, version, item, claim, EventType.PLAN_ITEM_CLAIM_RELEASED)


def update_plan_item(tx: Transaction, task_id: str, item_id: str, status: ItemStatus | None, summary: str | None,
                     active_issue: str | None, holder: str, dismiss_question: bool = False) -> PlanItem:
    """UpdatePlanItem with claims: with a holder, only while it holds the item; any status but IN_PROGRESS
    ends the item's claim. An expired claim met here is expired first, as the sweeper would."""
    version = task_store.touch_task(tx, task_id)
    stored = tx.fetchone(f"SELECT item_id, holder, claimed_at, expires_at FROM plan_item_claims WHERE {_KEY}",
                         (tx.namespace, task_id, item_id))
    claim = task_store.claim_from_row(task_id, stored) if stored else None
    if claim is not None and not claim.live(tx.now) and _expire(tx, task_id, version, claim):
        claim = None
    if holder:
        current = _current(tx, task_id, item_id) if claim else None
        if current is None:
            _load_item(tx, task_id, version, item_id)  # NOT_FOUND for an unknown item, before "not held"
        check_holder(item_id, holder, current)
    item = task_store.update_plan_item(tx, task_id, item_id, status, summary, active_issue, dismiss_question)
    if claim is not None and item.status is not ItemStatus.IN_PROGRESS:
        _delete(tx, task_id, claim)
    elif claim is not None:
        item.holder_id = claim.holder
    return item


def expire_due(tx: Transaction, task_id: str) -> None:
    """The claim sweeper's write for one task: expire its claims past their lease."""
    version = _lock_task(tx, task_id)
    _, changed = _settle(tx, task_id, version, _outline(tx, task_id, version) if version else [])
    tx.quiet = not changed
