"""Plan progress inferred from a message, applied in the transaction that stores the message."""

from __future__ import annotations

from taskmem.core.events import EventType
from taskmem.core.messages import Message
from taskmem.core.plan_inference import applicable_claims, completion_claims, reads_message
from taskmem.core.plans import ItemStatus, PlanItem, StatusSource, set_item_status
from taskmem.store.tasks.tasks import load_plan_item, load_plan_outline, save_plan_item
from taskmem.store.access import Transaction


def infer_plan_progress(tx: Transaction, message: Message) -> list[PlanItem]:
    """Mark COMPLETED the items of the task's current plan that the message says are finished.

    Each change records source INFERRED and the message id, and emits PLAN_ITEM_UPDATED with the
    evidence. Returns the changed items (none when the task opted out or has no plan).
    """
    if not message.task_id or not reads_message(message.role, message.kind, message.content):
        return []
    row = tx.fetchone("SELECT plan_version, plan_inference_disabled FROM tasks WHERE namespace = ? AND id = ?",
                      (tx.namespace, message.task_id))
    if row is None or row["plan_inference_disabled"] or not row["plan_version"]:
        return []
    version = int(row["plan_version"])
    outline = load_plan_outline(tx, tx.namespace, message.task_id, version)
    changed = []
    for claim in applicable_claims(outline, completion_claims(outline, message.content)):
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
