"""Plan progress inferred from a message, applied in the transaction that stores the message."""

from __future__ import annotations

from taskmem.core.events import EventType
from taskmem.core.messages import Message
from taskmem.core.plan_inference import ItemOutline, Similarities, applicable_claims, completion_claims, reads_message
from taskmem.core.plans import ItemStatus, PlanItem, StatusSource, set_item_status
from taskmem.store.access import Reader, Transaction
from taskmem.store.tasks.tasks import load_plan_item, load_plan_outline, save_plan_item


def inferring_outline(db: Reader, namespace: str, task_id: str) -> tuple[int, list[ItemOutline]] | None:
    """The version and outline of the task's current plan, when messages may complete its items (the task
    exists, has a plan and has not opted out)."""
    row = db.fetchone("SELECT plan_version, plan_inference_disabled FROM tasks WHERE namespace = ? AND id = ?",
                      (namespace, task_id))
    if row is None or row["plan_inference_disabled"] or not row["plan_version"]:
        return None
    version = int(row["plan_version"])
    return version, load_plan_outline(db, namespace, task_id, version)


def infer_plan_progress(tx: Transaction, message: Message, similarities: Similarities | None = None) -> list[PlanItem]:
    """Mark COMPLETED the items of the task's current plan that the message says are finished.

    similarities are those of the message's unlinked reports to the plan's titles, computed before the
    transaction (None: the link is by words and outcomes only). Each change records source INFERRED
    and the message id, and emits PLAN_ITEM_UPDATED with the evidence. Returns the changed items (none
    when the task opted out or has no plan).
    """
    if not message.task_id or not reads_message(message.role, message.kind, message.content):
        return []
    current = inferring_outline(tx, tx.namespace, message.task_id)
    if current is None:
        return []
    version, outline = current
    changed = []
    for claim in applicable_claims(outline, completion_claims(outline, message.content, similarities)):
        item = load_plan_item(tx, tx.namespace, message.task_id, version, claim.item_id)
        assert item is not None  # it is in the outline read in this transaction
        set_item_status(item, ItemStatus.COMPLETED, tx.now)
        item.status_source, item.status_message_id = StatusSource.INFERRED, message.id
        save_plan_item(tx, message.task_id, version, item)
        tx.emit(EventType.PLAN_ITEM_UPDATED, message.task_id, item, {
            "plan_version": version,
            "inference": {"message_id": message.id, "matched_by": claim.matched_by.value,
                          "evidence": claim.evidence}})
        changed.append(item)
    return changed
