"""ExtractState: read the thread past its watermark, ask the model for candidates, reconcile, commit.

Items, embeddings, the new watermark and the event commit in one transaction: a crash or a model
failure anywhere before that commit leaves the watermark where it was, so the same batch is read
again next time. A batch with no user message is skipped (the watermark moves past it, no model call).
A namespace whose model budget is used up is skipped too, its watermark kept (model_budget_exhausted).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time

from taskmem.core.errors import ModelTimeout, ModelUnavailable, NotConfigured
from taskmem.core.events import EventType
from taskmem.core.messages import Message, Role
from taskmem.core.model_usage import Purpose
from taskmem.core.reconcile import ReconcileThresholds, prepare_candidates
from taskmem.core.state_prompts import EXTRACTION_SYSTEM, extraction_user_prompt, parse_candidates
from taskmem.core.state_records import ReconcileReport, StoredStateItem, Watermark
from taskmem.providers.chat import ChatModel, ChatModelBudgetExhausted, ChatModelError, ChatModelTimeout
from taskmem.providers.embeddings import Embedder
from taskmem.providers.model_meter import model_work
from taskmem.state.adjudication import Adjudicator
from taskmem.state.thread_reconciliation import ReconcilePlan, batch_of, plan_reconciliation
from taskmem.store.state import state_items as item_store
from taskmem.store.storage import Storage
from taskmem.store.access import Reader, Transaction


@dataclasses.dataclass(frozen=True)
class ExtractionSettings:
    max_messages: int
    timeout_seconds: float
    max_candidates: int


@dataclasses.dataclass
class _Read:
    mark: Watermark | None
    batch: list[Message]
    items: list[StoredStateItem]
    vectors: dict[str, object]


def _read(db: Reader, namespace: str, thread_id: str, task_id: str, limit: int, model: str) -> _Read:
    item_store.check_thread(db, namespace, task_id)
    mark = item_store.watermark(db, namespace, thread_id)
    batch = item_store.messages_after(db, namespace, thread_id, mark, limit)
    items = item_store.thread_items(db, namespace, thread_id) if batch else []
    vectors = item_store.embeddings(db, namespace, thread_id, model) if batch else {}
    return _Read(mark, batch, items, vectors)


async def extract_state(storage: Storage, chat: ChatModel | None, embedder: Embedder | None,
                        thresholds: ReconcileThresholds, settings: ExtractionSettings, namespace: str,
                        correlation_id: str, thread_id: str, task_id: str, now: int,
                        adjudicator: Adjudicator | None = None) -> tuple[ReconcileReport, list[StoredStateItem]]:
    started = time.perf_counter()
    model_name = embedder.model_name if embedder is not None else ""
    read = await storage.read(_read, namespace, thread_id, task_id, settings.max_messages, model_name)
    report = ReconcileReport(messages_read=len(read.batch))
    plan: ReconcilePlan | None = None
    if not read.batch:
        report.skipped_reason = "no_new_messages"
    elif not any(m.role is Role.USER for m in read.batch):
        report.skipped_reason = "no_user_message"
    else:
        if chat is None:
            raise NotConfigured("llm_base_url and llm_model", "ExtractState needs a utility model")
        existing = [item for item in read.items if item.active]
        answer = await _ask(chat, extraction_user_prompt(existing, read.batch), settings.timeout_seconds)
        if answer is None:
            report.skipped_reason = "model_budget_exhausted"
        else:
            prepared = prepare_candidates(parse_candidates(answer), batch_of(read.batch), settings.max_candidates)
            plan = await plan_reconciliation(read.items, read.vectors, prepared, embedder,  # type: ignore[arg-type]
                                             thresholds, thread_id, now, adjudicator)
            report = dataclasses.replace(plan.report, messages_read=len(read.batch))
    # Refused by the budget: the batch was not read by any model, so the watermark stays before it.
    last = read.batch[-1] if read.batch and report.skipped_reason != "model_budget_exhausted" else None
    report.duration_us = int((time.perf_counter() - started) * 1_000_000)

    def commit(tx: Transaction) -> list[StoredStateItem]:
        written = plan.persist(tx) if plan is not None else []
        mark = Watermark(last.created_at, last.id) if last is not None else read.mark
        if last is not None:
            item_store.set_watermark(tx, thread_id, Watermark(last.created_at, last.id))
        tx.emit(EventType.STATE_EXTRACTION_COMPLETED, task_id, None, {
            **report.to_json(), "thread_id": thread_id,
            "watermark": {"created_at": mark.created_at, "message_id": mark.message_id} if mark else None})
        return written

    written = await storage.write(commit, namespace, correlation_id)
    return report, written


async def _ask(chat: ChatModel, prompt: str, timeout: float) -> str | None:
    """The model's answer; None when the namespace's model budget refused the call."""
    try:
        with model_work(purpose=Purpose.STATE_EXTRACTION):
            return await asyncio.wait_for(chat.complete(EXTRACTION_SYSTEM, prompt, timeout=timeout), timeout)
    except ChatModelBudgetExhausted:
        return None
    except (TimeoutError, ChatModelTimeout):
        raise ModelTimeout(f"the model did not answer within {timeout} s (state_extraction_timeout_seconds)") \
            from None
    except ChatModelError as error:
        raise ModelUnavailable(str(error)) from None
