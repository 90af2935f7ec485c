"""StateService's engine: the shared pieces (token counter, providers, working memory, per-thread locks)
and the pipelines that need more than one read or write. The servicer only validates and converts."""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import time

from taskmem.config import Config, reconciliation_thresholds
from taskmem.core.context_budget import ContextMode, Section
from taskmem.core.errors import ModelTimeout, ModelUnavailable
from taskmem.core.ids import now_us
from taskmem.core.progress import compute_progress
from taskmem.core.reconcile import Prepared, ReconcileThresholds
from taskmem.core.state_items import Candidate
from taskmem.core.state_prompts import QUERY_SYSTEM, query_user_prompt
from taskmem.core.state_records import ReconcileReport, StoredStateItem
from taskmem.core.task_state_yaml import TaskStateView, build_task_state, fit_task_state
from taskmem.core.tokens import TokenCounter
from taskmem.providers.chat import ChatModel, ChatModelError, ChatModelTimeout
from taskmem.providers.embeddings import Embedder
from taskmem.state import memory_log
from taskmem.state.context import TAIL_MESSAGES, ContextInputs, build_context
from taskmem.state.extraction import ExtractionSettings, extract_state
from taskmem.state.follower import StateFollower
from taskmem.state.working_memory import WorkingMemoryEngine
from taskmem.state.reconciliation import ReconcilePlan, batch_of, plan_reconciliation, prepare_agent_candidates
from taskmem.store import actions as action_store
from taskmem.store import state_items as item_store
from taskmem.store import state_task
from taskmem.store.storage import Storage
from taskmem.store.writer import Reader

log = logging.getLogger(__name__)

QUERY_MESSAGES = 50


@dataclasses.dataclass
class Answer:
    answer: str
    from_model: bool
    note: str = ""
    running_summary: str = ""
    messages_since_summary: int = 0


class StateEngine:
    def __init__(self, storage: Storage, config: Config, counter: TokenCounter, embedder: Embedder | None,
                 chat: ChatModel | None) -> None:
        self.storage = storage
        self.config = config
        self.counter = counter
        self.embedder = embedder
        self.chat = chat
        self.working_memories = WorkingMemoryEngine(storage, config.working_memory_max_bytes,
                                                    config.working_memory_max_agents)
        self._locks: dict[tuple[str, str], asyncio.Lock] = collections.defaultdict(asyncio.Lock)
        self.follower = StateFollower(self)

    # --- life cycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        self.follower.start()

    async def stop(self) -> None:
        """Stop background work."""
        await self.follower.stop()

    def thread_lock(self, namespace: str, thread_id: str) -> asyncio.Lock:
        """Held by whatever reconciles a thread: one decision at a time per thread."""
        return self._locks[(namespace, thread_id)]

    def thresholds(self) -> ReconcileThresholds:
        model = self.embedder.model_name if self.embedder is not None else ""
        return reconciliation_thresholds(model, self.config.reconciliation)

    # --- task state -------------------------------------------------------------------------------

    async def task_view(self, namespace: str, task_id: str) -> TaskStateView:
        return await self.storage.read(_task_view, namespace, task_id)

    async def task_state(self, namespace: str, task_id: str, budget: int) -> tuple[str, TaskStateView, list[str]]:
        return fit_task_state(await self.task_view(namespace, task_id), self.counter, budget)

    # --- structured state -------------------------------------------------------------------------

    async def extract(self, namespace: str, correlation_id: str, thread_id: str,
                      task_id: str) -> tuple[ReconcileReport, list[StoredStateItem]]:
        settings = ExtractionSettings(self.config.state_extraction_max_messages,
                                      self.config.state_extraction_timeout_seconds, self.config.state_max_candidates)
        async with self.thread_lock(namespace, thread_id):
            return await extract_state(self.storage, self.chat, self.embedder, self.thresholds(), settings,
                                       namespace, correlation_id, thread_id, task_id, now_us())

    async def plan_upsert(self, namespace: str, thread_id: str, task_id: str,
                          candidates: list[Candidate]) -> ReconcilePlan:
        """Decide an agent's candidates (call it holding thread_lock, and persist before releasing it)."""
        started = time.perf_counter()
        model = self.embedder.model_name if self.embedder is not None else ""
        refs = [ref for c in candidates for ref in c.refs]
        existing, vectors, messages = await self.storage.read(_upsert_read, namespace, thread_id, task_id, refs, model)
        now = now_us()
        prepared: Prepared = prepare_agent_candidates(candidates, batch_of(messages), now,
                                                      self.config.state_max_candidates)
        plan = await plan_reconciliation(existing, vectors, prepared, self.embedder, self.thresholds(), thread_id,
                                         now)
        plan.report.duration_us = int((time.perf_counter() - started) * 1_000_000)
        return plan

    # --- context and the live query ---------------------------------------------------------------

    async def build_context(self, namespace: str, thread_id: str, task_id: str, budget: int, mode: ContextMode,
                            query: str) -> tuple[str, list[Section]]:
        record, view, (knowledge, memories) = await self.storage.read(_context_read, namespace, thread_id, task_id,
                                                                      query)
        inputs = ContextInputs(record.summary.summary if record.summary else "", view, record.items, knowledge,
                               memories, record.recent)
        return build_context(self.counter, budget, mode, inputs, self.config.state_max_active_items)

    async def query_task(self, namespace: str, task_id: str, question: str) -> Answer:
        record, since, failed = await self.storage.read(_query_read, namespace, task_id)
        assert record.task is not None
        if self.chat is None:
            progress = compute_progress(record.task, record.plan, failed, record.recent)
            return Answer(progress.summary, False, "no model is configured: set llm_base_url and llm_model for"
                                                    " answers from the running summary")
        summary = record.summary.summary if record.summary else ""
        plan_lines = [f"- {i.id} [{i.status.value.removeprefix('PLAN_ITEM_STATUS_').lower()}] {i.title}"
                      for i in (record.plan.items if record.plan else [])]
        prompt = query_user_prompt(f"Task: {record.task.name} ({record.task.status.value})", plan_lines, summary,
                                   since, question)
        timeout = self.config.llm_timeout_seconds
        try:
            text = await self.chat.complete(QUERY_SYSTEM, prompt, timeout=timeout)
        except ChatModelTimeout:
            raise ModelTimeout(f"the model did not answer within {timeout} s") from None
        except ChatModelError as error:
            raise ModelUnavailable(str(error)) from None
        return Answer(text.strip(), True, "", summary, len(since))


def _task_view(db: Reader, namespace: str, task_id: str) -> TaskStateView:
    task, plan = state_task.task_outline(db, namespace, task_id)
    decisions, errors, workspace = memory_log.task_log(db, namespace, task_id)
    return build_task_state(task, plan, decisions, errors, workspace)


def _context_read(db: Reader, namespace: str, thread_id: str, task_id: str, query: str) -> tuple[
        state_task.ThreadRecord, TaskStateView | None, tuple[list[str], list[str]]]:
    view = _task_view(db, namespace, task_id) if task_id else None  # raises NotFound for an unknown task
    record = state_task.thread_record(db, namespace, thread_id, "", TAIL_MESSAGES)
    return record, view, memory_log.context_lines(db, namespace, task_id, query)


def _upsert_read(db: Reader, namespace: str, thread_id: str, task_id: str, refs: list[str],
                 model: str) -> tuple[list[StoredStateItem], dict[str, object], list[object]]:
    item_store.check_thread(db, namespace, task_id)
    return (item_store.thread_items(db, namespace, thread_id), item_store.embeddings(db, namespace, thread_id, model),
            item_store.messages_by_id(db, namespace, thread_id, refs))


def _query_read(db: Reader, namespace: str, task_id: str) -> tuple[state_task.ThreadRecord, list[object], object]:
    record = state_task.thread_record(db, namespace, task_id, task_id, 5)
    since = state_task.messages_since(db, namespace, task_id, record.summary, QUERY_MESSAGES)
    return record, since, action_store.last_failed_action(db, namespace, task_id)
