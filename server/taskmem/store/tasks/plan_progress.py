"""Plan progress inferred from a message, applied in the transaction that stores the message."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from taskmem.core.events import EventType
from taskmem.core.messages import Message
from taskmem.core.plan_inference import Claim, MatchedBy, applicable_claims, progress_findings, reads_message
from taskmem.core.plan_judge import Judgement, Verdict
from taskmem.core.plans import ItemStatus, PlanItem, StatusSource, StepQuestion, set_item_status
from taskmem.store.access import Transaction
from taskmem.store.tasks.tasks import load_plan_item, load_plan_outline, save_plan_item


@dataclasses.dataclass
class Inferred:
    """What a message did to the plan: the items it completed, and the items it asked about."""

    completed: list[PlanItem] = dataclasses.field(default_factory=list)
    asked: list[PlanItem] = dataclasses.field(default_factory=list)


def infer_plan_progress(tx: Transaction, message: Message) -> Inferred:
    """Mark COMPLETED the items of the task's current plan that the message finishes by certain evidence,
    and put a "may be finished" question on those it probably finishes (core/plan_inference).

    Each change emits PLAN_ITEM_UPDATED with the evidence; a completion records source INFERRED and the
    message id. Nothing is done when the task opted out or has no plan.
    """
    if not message.task_id or not reads_message(message.role, message.kind, message.content):
        return Inferred()
    row = tx.fetchone("SELECT plan_version, plan_inference_disabled FROM tasks WHERE namespace = ? AND id = ?",
                      (tx.namespace, message.task_id))
    if row is None or row["plan_inference_disabled"] or not row["plan_version"]:
        return Inferred()
    version = int(row["plan_version"])
    outline = load_plan_outline(tx, tx.namespace, message.task_id, version)
    inferred = Inferred()
    for claim in applicable_claims(outline, progress_findings(outline, message.content)):
        item = load_plan_item(tx, tx.namespace, message.task_id, version, claim.item_id)
        assert item is not None  # it is in the outline read in this transaction
        if claim.certain:
            complete_inferred(tx, message.task_id, version, item, message.id, claim)
            inferred.completed.append(item)
        else:
            item.question = StepQuestion(message.id, claim.evidence, claim.why)
            _save(tx, message.task_id, version, item, message.id, claim)
            inferred.asked.append(item)
    return inferred


def complete_inferred(tx: Transaction, task_id: str, version: int, item: PlanItem, message_id: str,
                      claim: Claim, judged_by: str = "") -> None:
    """Mark an item COMPLETED from a message (by certain evidence, or by a model's answer to its question)."""
    set_item_status(item, ItemStatus.COMPLETED, tx.now)
    item.status_source, item.status_message_id = StatusSource.INFERRED, message_id
    _save(tx, task_id, version, item, message_id, claim, judged_by)


def _save(tx: Transaction, task_id: str, version: int, item: PlanItem, message_id: str, claim: Claim,
          judged_by: str = "", dismissed: bool = False) -> None:
    save_plan_item(tx, task_id, version, item)
    inference = {"message_id": message_id, "matched_by": claim.matched_by.value, "evidence": claim.evidence}
    if not claim.certain:
        inference["question"] = claim.why
    if judged_by:
        inference["dismissed_by" if dismissed else "judged_by"] = judged_by
    tx.emit(EventType.PLAN_ITEM_UPDATED, task_id, item, {"plan_version": version, "inference": inference})


def settle_questions(tx: Transaction, task_id: str, message_id: str, model: str,
                     answers: Sequence[tuple[str, Judgement]]) -> list[PlanItem]:
    """Apply a model's answers to the questions a message left, by item id; returns the items it completed.

    An answer applies only while its question still stands (the item asked about by this message, its status
    unchanged since): finished completes the item, not_finished dismisses the question, unsure leaves it.
    """
    version = tx.fetchone("SELECT plan_version FROM tasks WHERE namespace = ? AND id = ?", (tx.namespace, task_id))
    completed = []
    for item_id, judgement in answers:
        item = load_plan_item(tx, tx.namespace, task_id, int(version[0]), item_id) if version else None
        if item is None or item.question is None or item.question.message_id != message_id \
                or judgement.verdict is Verdict.UNSURE:
            continue
        claim = Claim(item_id, MatchedBy.TITLE, item.question.evidence, False, item.question.reason)
        judged = f"{model}: {judgement.reason}" if judgement.reason else model
        if judgement.verdict is Verdict.FINISHED:
            item.question = None
            complete_inferred(tx, task_id, int(version[0]), item, message_id, claim, judged)
            completed.append(item)
        else:
            item.question = None
            _save(tx, task_id, int(version[0]), item, message_id, claim, judged, dismissed=True)
    return completed
