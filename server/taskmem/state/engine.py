"""StateService's data plane: the servicer validates and converts; this engine owns the per-thread locks,
the reconciliation runs, their persistence and their events, and the reads every view derives from.

Writes take `respond` (the caller's conversion of the domain result into its response) and `once` (the
request's idempotency key, or None): both run inside the write's transaction, so a retry returns the
first response and writes nothing (AIP-155).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TypeVar

import numpy as np

from taskmem.config import reconciliation_thresholds
from taskmem.core.context_budget import ContextMode, Section
from taskmem.core.errors import EmbeddingUnavailable, ModelTimeout, ModelUnavailable, NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryEntry, NewMemoryEntry
from taskmem.core.messages import Message
from taskmem.core.model_usage import Purpose
from taskmem.core.model_routing import ModelTier
from taskmem.core.open_conflicts import Answer
from taskmem.core.progress import compute_progress, render_state_lines
from taskmem.core.reconcile import Prepared, ReconcileThresholds
from taskmem.core.state_items import Candidate
from taskmem.core.state_notes import DECISION_KIND, EntryLink, StateNotes
from taskmem.core.state_prompts import QUERY_SYSTEM, query_user_prompt
from taskmem.core.state_records import CandidateResult, ReconcileReport, StoredStateItem
from taskmem.core.task_state_diff import unified_state_diff
from taskmem.core.task_state_yaml import TaskStateFits, TaskStateView, build_task_state, render_task_state_yaml
from taskmem.core.valid_time import AsOf, Moment, StateVersion
from taskmem.core.tokens import TokenCounter
from taskmem.providers.chat import ChatModel, ChatModelBudgetExhausted, ChatModelError, ChatModelTimeout
from taskmem.providers.embeddings import Embedder, EmbeddingError
from taskmem.providers.model_meter import model_work
from taskmem.providers.model_router import ModelRouter
from taskmem.settings import StateSettings
from taskmem.state import view_sections
from taskmem.state.adjudication import adjudicator_for
from taskmem.state.context import TAIL_MESSAGES, ContextInputs, build_context
from taskmem.state.extraction import ExtractionSettings, extract_state
from taskmem.state.thread_locks import KeyedLocks
from taskmem.state.thread_reconciliation import (
    ReconcilePlan, batch_of, plan_reconciliation, prepare_agent_candidates, stated_candidate,
)
from taskmem.state.working_memory import WorkingMemoryEngine
from taskmem.store.tasks import actions as action_store
from taskmem.store.state import state_items as item_store
from taskmem.store.as_of import resolve
from taskmem.store.event_log import last_cursor
from taskmem.store.state import state_item_entries, view_as_of, view_reads
from taskmem.store.tasks.tasks import load_task
from taskmem.store.idempotency import Once, run_once
from taskmem.store.memory.memory_entries import insert_memory_entries
from taskmem.store.expired_items import next_expiry
from taskmem.store.memory.memory_vectors import recorded_model
from taskmem.store.state.state_item_entries import link_entry
from taskmem.store.storage import Storage
from taskmem.store.access import Reader, Transaction

log = logging.getLogger(__name__)

QUERY_MESSAGES = 50
R = TypeVar("R")


@dataclasses.dataclass
class Answer:
    answer: str
    from_model: bool
    note: str = ""
    running_summary: str = ""
    messages_since_summary: int = 0
    answered_by: ModelTier | None = None  # which model wrote it (None: no model did)
    answered_by_model: str = ""
    fell_back: bool = False


@dataclasses.dataclass
class Reconciled:
    """What an upsert or extraction did, and the items it wrote."""

    report: ReconcileReport
    items: list[StoredStateItem]


@dataclasses.dataclass
class Stated:
    """AddDecision or AddError: the memory entry (the history), the state item it was reconciled into
    (the current truth) and how."""

    entry: MemoryEntry
    item: StoredStateItem
    report: ReconcileReport


@dataclasses.dataclass(frozen=True)
class Statement:
    """A decision or an error as the caller states it."""

    kind: str  # DECISION_KIND or ERROR_KIND
    text: str
    subtask_id: str
    detail: str  # a decision's detail, an error's resolution
    supersedes: str = ""  # decisions: the uid the caller says this one replaces


class GuardedEmbedder:
    """The configured embedder, with its failures as EmbeddingUnavailable (UNAVAILABLE,
    ERROR_REASON_EMBEDDING_UNAVAILABLE) on every StateService path, as MemoryService reports them."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.model_name = embedder.model_name
        self.dimension = embedder.dimension

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            return await self._embedder.embed(texts)
        except EmbeddingError as error:
            raise EmbeddingUnavailable(str(error)) from error


class StateEngine:
    def __init__(self, storage: Storage, settings: StateSettings, counter: TokenCounter, embedder: Embedder | None,
                 chat: ChatModel | None, router: ModelRouter | None = None) -> None:
        self.storage = storage
        self.settings = settings
        self.counter = counter
        self.task_state_fits = TaskStateFits(counter)
        self.embedder: Embedder | None = GuardedEmbedder(embedder) if embedder is not None else None
        self.chat = chat  # the utility model: extraction and summaries
        self.router = router or ModelRouter(chat, None)  # QueryTask: the utility or the second model
        # The utility model, first to answer reconciliation's open questions (None: they wait for the caller).
        self.adjudicator = adjudicator_for(chat, settings.adjudication, settings.adjudication_timeout_seconds)
        self.working_memories = WorkingMemoryEngine(storage, settings.working_memory_max_bytes,
                                                    settings.working_memory_max_agents)
        self.thread_locks: KeyedLocks[tuple[str, str]] = KeyedLocks()  # (namespace, thread id), while in use

    # --- life cycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            adopted = await self.adopt_recorded_statements()
        except EmbeddingUnavailable as error:  # the next start tries again; nothing is lost meanwhile
            log.warning("decisions and errors recorded before issue 11 are not in the state yet: %s", error)
        else:
            if adopted:
                log.info("%d decisions and errors recorded earlier reconciled into their tasks' state", adopted)

    def thread_lock(self, namespace: str, thread_id: str) -> AbstractAsyncContextManager[None]:
        """Held by whatever reconciles a thread: one decision at a time per thread."""
        return self.thread_locks.hold((namespace, thread_id))

    def thresholds(self) -> ReconcileThresholds:
        model = self.embedder.model_name if self.embedder is not None else ""
        return reconciliation_thresholds(model, self.settings.reconciliation)

    # --- the views --------------------------------------------------------------------------------

    async def task_view(self, namespace: str, task_id: str, as_of: AsOf | None = None) -> TaskStateView:
        if as_of is None:
            return await self.storage.read(_task_view, namespace, task_id)
        return await self.storage.read(_task_view_as_of, namespace, task_id, as_of)

    async def task_state(self, namespace: str, task_id: str, budget: int,
                         as_of: AsOf | None = None) -> tuple[str, TaskStateView, list[str]]:
        return self.task_state_fits.fit(await self.task_view(namespace, task_id, as_of), budget)

    async def state_history(self, namespace: str, task_id: str, before_cursor: int | None,
                            limit: int) -> list[StateVersion]:
        return await self.storage.read(view_as_of.state_versions, namespace, task_id, before_cursor, limit)

    async def state_diff(self, namespace: str, task_id: str, from_cursor: int, to_cursor: int) -> StateDiff:
        return await self.storage.read(_state_diff, namespace, task_id, from_cursor, to_cursor)

    async def list_items(self, namespace: str, thread_id: str, task_id: str, types: list[str],
                         include_superseded: bool, as_of: AsOf | None = None) -> list[StoredStateItem]:
        return await self.storage.read(_list_items, namespace, thread_id, task_id, types, include_superseded, as_of)

    async def current_items(self, namespace: str, thread_id: str, task_id: str) -> list[StoredStateItem]:
        return await self.storage.read(item_store.current_items, namespace, thread_id, task_id)

    async def expand_item(self, namespace: str, thread_id: str, task_id: str,
                          uid: str) -> tuple[StoredStateItem, list[Message]]:
        return await self.storage.read(item_store.items_and_messages, namespace, thread_id, task_id, uid)

    # --- structured state -------------------------------------------------------------------------

    async def extract(self, namespace: str, correlation_id: str, thread_id: str, task_id: str) -> Reconciled:
        settings = ExtractionSettings(self.settings.extraction_max_messages,
                                      self.settings.extraction_timeout_seconds, self.settings.max_candidates)
        async with self.thread_lock(namespace, thread_id), model_work(namespace, thread_id):
            report, items = await extract_state(self.storage, self.chat, self.embedder, self.thresholds(), settings,
                                                namespace, correlation_id, thread_id, task_id, now_us(),
                                                self.adjudicator)
        return Reconciled(report, items)

    async def upsert_items(self, namespace: str, correlation_id: str, thread_id: str, task_id: str,
                           candidates: list[Candidate], respond: Callable[[Reconciled], R],
                           once: Once[R] | None) -> R:
        """Reconcile an agent's candidates into the thread's state (explicit `supersedes` always wins)."""
        async with self.thread_lock(namespace, thread_id), model_work(namespace, thread_id):
            refs = [ref for c in candidates for ref in c.refs]
            messages = await self.storage.read(_thread_messages, namespace, thread_id, task_id, refs)
            prepared = prepare_agent_candidates(candidates, batch_of(messages), self.settings.max_candidates)
            plan = await self._reconcile(namespace, thread_id, prepared)

            def persist(tx: Transaction) -> R:
                def run() -> R:
                    items = plan.persist(tx)
                    tx.emit(EventType.STATE_ITEMS_UPSERTED, task_id, None,
                            {**plan.report.to_json(), "thread_id": thread_id})
                    return respond(Reconciled(plan.report, items))
                return run_once(tx, once, run)

            return await self.storage.write(persist, namespace, correlation_id)

    async def add_statement(self, namespace: str, correlation_id: str, task_id: str, statement: Statement,
                            respond: Callable[[Stated], R], once: Once[R] | None) -> R:
        """AddDecision / AddError: a memory entry for the history, and the same reconciliation as any state
        item for the truth (see statement_candidates)."""
        if statement.kind == DECISION_KIND:
            entry = view_sections.decision_entry(task_id, statement.text, statement.subtask_id, statement.detail)
            event = EventType.TASK_STATE_DECISION_ADDED
        else:
            entry = view_sections.error_entry(task_id, statement.subtask_id, statement.text, statement.detail)
            event = EventType.TASK_STATE_ERROR_ADDED
        async with self.thread_lock(namespace, task_id), model_work(namespace, task_id):
            await self.storage.read(item_store.check_thread, namespace, task_id)
            vectors = await self._summary_vectors(entry)
            plan = await self._reconcile(namespace, task_id, statement_candidates(statement, now_us()))

            def add(tx: Transaction) -> R:
                def run() -> R:
                    stored = insert_memory_entries(tx, [entry], _indexable(tx, vectors))[0]
                    item, result = _persist_statement(tx, plan, task_id, statement, stored.id, stored.created_at)
                    assert item is not None, "a validated statement is always stored or merged"
                    tx.emit(event, task_id, item, {"memory_entry_id": stored.id, "subtask_id": stored.subtask_id,
                                                   "outcome": result.outcome, "target_uid": result.target_uid})
                    return respond(Stated(stored, item, plan.report))
                return run_once(tx, once, run)

            return await self.storage.write(add, namespace, correlation_id)

    async def adopt_recorded_statements(self, batch: int = 200) -> int:
        """Decisions and errors AddDecision/AddError recorded before their state items existed (a database
        from before issue 11): reconcile each, oldest first, as if it were added now, and link it, so every
        view still shows what was decided. Runs at start-up; returns how many it adopted."""
        adopted = 0
        while unlinked := await self.storage.read(state_item_entries.unlinked_statements, batch):
            for old in unlinked:
                statement = Statement(old.kind, old.text, old.subtask_id, old.detail)
                async with self.thread_lock(old.namespace, old.task_id):
                    # Builtin outcomes only: a slow or absent model must not hold up start-up.
                    plan = await self._reconcile(old.namespace, old.task_id,
                                                 statement_candidates(statement, old.created_at), adjudicate=False)

                    def adopt(tx: Transaction, old: state_item_entries.Unlinked = old,
                              statement: Statement = statement, plan: ReconcilePlan = plan) -> None:
                        _persist_statement(tx, plan, old.task_id, statement, old.memory_entry_id, old.created_at)
                        tx.emit(EventType.STATE_ITEMS_UPSERTED, old.task_id, None, {
                            **plan.report.to_json(), "thread_id": old.task_id, "adopted": old.memory_entry_id})

                    await self.storage.write(adopt, old.namespace, "adopt-recorded-statements")
                adopted += 1
        return adopted

    async def change_item(self, namespace: str, correlation_id: str, thread_id: str, task_id: str, uid: str, *,
                          pinned: bool | None = None, status: str | None = None,
                          respond: Callable[[StoredStateItem], R], once: Once[R] | None) -> R:
        """Pin/unpin an item or set its status (already checked against its type)."""
        async with self.thread_lock(namespace, thread_id):
            def change(tx: Transaction) -> R:
                def run() -> R:
                    item = item_store.change_item(tx, thread_id, task_id, uid, pinned=pinned, status=status)
                    tx.emit(EventType.STATE_ITEM_UPDATED, task_id, item)
                    return respond(item)
                return run_once(tx, once, run)

            return await self.storage.write(change, namespace, correlation_id)

    async def answer_question(self, namespace: str, correlation_id: str, thread_id: str, task_id: str,
                              new_uid: str, old_uid: str, answer: Answer, answered_by: str,
                              respond: Callable[[list[StoredStateItem]], R], once: Once[R] | None) -> R:
        """Settle an open question of reconciliation (store/state/state_items.answer_question)."""
        async with self.thread_lock(namespace, thread_id):
            def answer_it(tx: Transaction) -> R:
                def run() -> R:
                    items = item_store.answer_question(tx, thread_id, task_id, new_uid, old_uid, answer, answered_by)
                    for item in items:
                        tx.emit(EventType.STATE_ITEM_UPDATED, task_id, item)
                    return respond(items)
                return run_once(tx, once, run)

            return await self.storage.write(answer_it, namespace, correlation_id)

    async def _reconcile(self, namespace: str, thread_id: str, prepared: Prepared,
                         adjudicate: bool = True) -> ReconcilePlan:
        """Decide prepared candidates against the thread (call it holding thread_lock; persist before
        releasing it); adjudicate=False keeps the builtin outcomes even when a model is configured."""
        started = time.perf_counter()
        model = self.embedder.model_name if self.embedder is not None else ""
        existing, vectors = await self.storage.read(_reconcile_read, namespace, thread_id, model)
        plan = await plan_reconciliation(existing, vectors, prepared, self.embedder, self.thresholds(), thread_id,
                                         now_us(), self.adjudicator if adjudicate else None)
        plan.report.duration_us = int((time.perf_counter() - started) * 1_000_000)
        return plan

    async def _summary_vectors(self, entry: NewMemoryEntry) -> np.ndarray | None:
        """The memory entry's summary embedded for MemoryService's semantic search."""
        return await self.embedder.embed([entry.summary]) if self.embedder is not None else None

    # --- context and the live query ---------------------------------------------------------------

    async def build_context(self, namespace: str, thread_id: str, task_id: str, budget: int, mode: ContextMode,
                            query: str, as_of: AsOf | None = None) -> tuple[str, list[Section]]:
        reads, key = self.storage.thread_reads, (namespace, thread_id, task_id, query)
        cached = as_of is None and await self.storage.views_current()  # the past is read, not cached
        read: _ContextRead | None = reads.get(key) if cached else None
        if read is None or (read.stale_at is not None and read.stale_at <= now_us()):
            epoch = reads.epoch
            read = await self.storage.read(_context_read, namespace, thread_id, task_id, query, as_of)
            if cached:
                reads.put(key, epoch, read)
        built = read.built.get((budget, mode))
        if built is None:
            record, view, (knowledge, memories) = read.inputs  # shared with later calls: read only
            inputs = ContextInputs(record.summary.summary if record.summary else "", view, record.items, knowledge,
                                   memories, record.recent)
            built = build_context(self.counter, budget, mode, inputs, self.settings.max_active_items,
                                  self.task_state_fits.fit)
            if len(read.built) >= BUILT_PER_READ:
                del read.built[next(iter(read.built))]  # the oldest: callers rarely vary their budget
            read.built[(budget, mode)] = built
        text, sections = built
        return text, [dataclasses.replace(section) for section in sections]

    async def query_task(self, namespace: str, task_id: str, question: str,
                         model: ModelTier | None = None) -> Answer:
        record, since, failed, notes = await self.storage.read(_query_read, namespace, task_id)
        assert record.task is not None
        if not self.router.configured:
            progress = compute_progress(record.task, record.plan, failed, record.recent, notes)
            return Answer(progress.summary, False, "no model is configured: set llm_base_url and llm_model for"
                                                    " answers from the running summary")
        summary = record.summary.summary if record.summary else ""
        plan_lines = [f"- {i.id} [{i.status.value.removeprefix('PLAN_ITEM_STATUS_').lower()}] {i.title}"
                      for i in (record.plan.items if record.plan else [])]
        prompt = query_user_prompt(f"Task: {record.task.name} ({record.task.status.value})", plan_lines, summary,
                                   since, question, render_state_lines(notes))
        try:
            async with model_work(namespace, task_id, Purpose.QUERY):
                return await self._ask_model(prompt, question, model, summary, len(since))
        except ChatModelBudgetExhausted as refused:  # answered from the record, as with no model, and said so
            progress = compute_progress(record.task, record.plan, failed, record.recent, notes)
            return Answer(progress.summary, False, str(refused), summary, len(since))

    async def _ask_model(self, prompt: str, question: str, model: ModelTier | None, summary: str,
                         since_count: int) -> Answer:
        """QueryTask's one model call, routed to the utility or the second model (core.model_routing)."""
        timeout = self.settings.model_timeout_seconds
        try:
            routed = await self.router.complete(QUERY_SYSTEM, prompt, question=question, requested=model,
                                                timeout=timeout)
        except ChatModelBudgetExhausted:
            raise
        except ChatModelTimeout as error:
            raise ModelTimeout(f"the model did not answer within {timeout} s ({error})") from None
        except ChatModelError as error:
            raise ModelUnavailable(str(error)) from None
        return Answer(routed.text.strip(), True, "", summary, since_count, routed.tier, routed.model, routed.fell_back)


def statement_candidates(statement: Statement, now: int) -> Prepared:
    """A decision is the caller's own word, so a new value of a decision's slot supersedes it as a user
    message's would, and `supersedes` naming an active decision always does; an error is an action item,
    blocked until a resolution is recorded (then done: the same error again merges into it), and an error
    is no one's word on what should hold: one that contradicts another stays a conflict."""
    if statement.kind == DECISION_KIND:
        return stated_candidate(Candidate("decision", statement.text, confidence="high", source="agent",
                                          supersedes=statement.supersedes or None), now)
    status = "done" if statement.detail else "blocked"
    return stated_candidate(Candidate("action", statement.text, status=status, confidence="high", source="agent"),
                            now, grounded=False)


def _persist_statement(tx: Transaction, plan: ReconcilePlan, task_id: str, statement: Statement, entry_id: str,
                       created_at: int) -> tuple[StoredStateItem | None, CandidateResult]:
    """Write the reconciled items and link the memory entry to the item it became (or merged into; for a
    candidate dropped as invalid, to no item: the entry is still linked, so it is not adopted again)."""
    written = {item.uid: item for item in plan.persist(tx)}
    result = plan.report.results[-1]
    uid = result.target_uid if result.outcome in ("merged", "dropped") else result.uid
    item = written.get(uid) or (item_store.load_item(tx, tx.namespace, task_id, uid) if uid else None)
    link_entry(tx, task_id, EntryLink(uid, entry_id, statement.kind, statement.subtask_id, statement.detail,
                                      created_at))
    return item, result


def _task_view(db: Reader, namespace: str, task_id: str,
               current: list[StoredStateItem] | None = None, moment: Moment | None = None) -> TaskStateView:
    """The task-state view now, or as it stood at moment (NotFound when the task did not exist yet)."""
    if moment is None:
        task, plan = view_reads.task_outline(db, namespace, task_id)
    elif (outline := view_as_of.task_outline_as_of(db, namespace, task_id, moment)) is not None:
        task, plan = outline
    else:
        raise NotFound("task", f"{task_id} as of then")
    at = moment.at if moment is not None else None
    notes: StateNotes = view_reads.task_notes(db, namespace, task_id, current, at)
    return build_task_state(task, plan, view_sections.newest_decisions(notes), view_sections.newest_errors(notes),
                            view_sections.workspace_of(db, namespace, task_id, at), constraints=notes.constraints,
                            questions=notes.questions, risks=notes.risks, waits=notes.waits,
                            conflicts=notes.conflicts)


def _task_view_as_of(db: Reader, namespace: str, task_id: str, as_of: AsOf) -> TaskStateView:
    return _task_view(db, namespace, task_id, None, resolve(db, namespace, as_of))


@dataclasses.dataclass(frozen=True)
class StateDiff:
    diff: str
    from_yaml: str
    to_yaml: str
    to_cursor: int


def _full_yaml(db: Reader, namespace: str, task_id: str, cursor: int) -> str:
    """The whole task-state YAML (no budget) as of an event cursor; empty before the task existed."""
    try:
        return render_task_state_yaml(_task_view_as_of(db, namespace, task_id, AsOf(cursor=cursor)))
    except NotFound:
        load_task(db, namespace, task_id)  # an unknown task is NOT_FOUND; a task not yet created is empty
        return ""


def _state_diff(db: Reader, namespace: str, task_id: str, from_cursor: int, to_cursor: int) -> StateDiff:
    to_cursor = to_cursor or last_cursor(db, namespace)
    before, after = _full_yaml(db, namespace, task_id, from_cursor), _full_yaml(db, namespace, task_id, to_cursor)
    return StateDiff(unified_state_diff(task_id, from_cursor, to_cursor, before, after), before, after, to_cursor)


BUILT_PER_READ = 8  # contexts kept per cached read (distinct budget and mode pairs)


@dataclasses.dataclass
class _ContextRead:
    """One thread's context inputs as read, and the contexts built from them by (budget, mode); the
    storage's thread-read cache drops both together when a commit could change the inputs."""
    inputs: tuple[view_reads.ThreadRecord, TaskStateView | None, tuple[list[str], list[str]]]
    # When the next memory entry or message expires (None: none will): the memory lines or the recent
    # messages may hold it, so the read is not served from then on (nothing expired comes back from any read).
    stale_at: int | None
    built: dict[tuple[int, ContextMode], tuple[str, list[Section]]] = dataclasses.field(default_factory=dict)


def _context_read(db: Reader, namespace: str, thread_id: str, task_id: str, query: str,
                  as_of: AsOf | None = None) -> _ContextRead:
    if task_id:
        item_store.check_thread(db, namespace, task_id)  # NOT_FOUND for an unknown task, before anything else
    stale_at = next_expiry(db, now_us())  # read first: an item expiring during the read is counted
    moment = resolve(db, namespace, as_of)
    at = moment.at if moment is not None else None
    record = view_reads.thread_record(db, namespace, thread_id, "", TAIL_MESSAGES, at)
    view = _task_view(db, namespace, task_id, record.items, moment) if task_id else None
    return _ContextRead((record, view, view_sections.context_lines(db, namespace, task_id, query, record.items, at)),
                        stale_at)


def _reconcile_read(db: Reader, namespace: str, thread_id: str,
                    model: str) -> tuple[list[StoredStateItem], dict[str, object]]:
    return item_store.thread_items(db, namespace, thread_id), item_store.embeddings(db, namespace, thread_id, model)


def _thread_messages(db: Reader, namespace: str, thread_id: str, task_id: str, refs: list[str]) -> list[Message]:
    item_store.check_thread(db, namespace, task_id)
    return item_store.messages_by_id(db, namespace, thread_id, refs)


def _list_items(db: Reader, namespace: str, thread_id: str, task_id: str, types: list[str],
                include_superseded: bool, as_of: AsOf | None) -> list[StoredStateItem]:
    item_store.check_thread(db, namespace, task_id)
    moment = resolve(db, namespace, as_of)
    return item_store.thread_items(db, namespace, thread_id, include_superseded=include_superseded, types=types,
                                   at=moment.at if moment is not None else None)


def _query_read(db: Reader, namespace: str, task_id: str) -> tuple[view_reads.ThreadRecord, list[Message], object,
                                                                    StateNotes]:
    record = view_reads.thread_record(db, namespace, task_id, task_id, 5)
    since = view_reads.messages_since(db, namespace, task_id, record.summary, QUERY_MESSAGES)
    return (record, since, action_store.last_failed_action(db, namespace, task_id),
            view_reads.task_notes(db, namespace, task_id))


def _indexable(tx: Transaction, vectors: np.ndarray | None) -> np.ndarray | None:
    """The summary's vector when the memory index is ready for it (MemoryService records the model at start)."""
    recorded = recorded_model(tx)
    return vectors if vectors is not None and recorded is not None and recorded[1] == vectors.shape[1] else None
