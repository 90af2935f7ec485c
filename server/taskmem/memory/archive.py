"""The memory archive as the servicer uses it: entries written and embedded in the background, searches
in three modes, and write-time extraction by the utility model."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.resources
import logging
from collections.abc import Sequence

import numpy as np
import yaml

from taskmem.config import ConfigError
from taskmem.core.errors import EmbeddingUnavailable, ModelTimeout, ModelUnavailable, NotConfigured, ResourceExhausted
from taskmem.core.events import EventType
from taskmem.core.ids import now_us
from taskmem.core.memory import MemoryEntry, MemoryFilter, MemoryType, NewMemoryEntry
from taskmem.core.memory_extraction import (
    Dropped, NoArrayFound, PromptTemplate, ToolCall, check_candidates, parse_candidates, render_prompt,
)
from taskmem.core.memory_recency import RecencyWeights, rerank_by_recency, rerank_pool
from taskmem.core.memory_search import FullTextQuery, Hit, SearchMode, full_text_query
from taskmem.core.model_usage import Purpose
from taskmem.core.retention import Retention
from taskmem.core.valid_time import AsOf, current_first
from taskmem.providers.chat import (
    ChatModel, ChatModelBudgetExhausted, ChatModelNotConfigured, ChatModelTimeout, ChatModelUnavailable,
)
from taskmem.providers.model_meter import model_work
from taskmem.providers.embeddings import Embedder, EmbeddingError
from taskmem.memory.embedding_backlog import EmbeddingBacklog
from taskmem.store.memory import (
    memory_backlog, memory_entries, memory_search, memory_text_index, memory_vector_index, memory_vectors,
)
from taskmem.store.as_of import resolve
from taskmem.store.memory.episodes import require_task
from taskmem.store.state.state_item_entries import superseded_entries
from taskmem.store.storage import Storage
from taskmem.store.access import Reader, Transaction

log = logging.getLogger(__name__)


def load_extraction_prompt() -> PromptTemplate:
    """The prompt template shipped as package data (taskmem/prompts/memory_extraction.yaml)."""
    text = (importlib.resources.files("taskmem.prompts") / "memory_extraction.yaml").read_text(encoding="utf-8")
    loaded = yaml.safe_load(text)
    return PromptTemplate(system=str(loaded["system"]), user=str(loaded["user"]))


@dataclasses.dataclass(frozen=True)
class Extraction:
    """What the model proposed: the valid entries, the dropped candidates, how many there were in all,
    and, for a reply with no JSON array at all, what was wrong with it."""

    entries: list[NewMemoryEntry]
    dropped: list[Dropped]
    candidates: int
    parse_error: str


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """The mode that ran, its hits best first (each with its entry), which of the hits still wait for
    their embedding, and how many entries of the filter wait in all (so SEMANTIC cannot find them yet)."""

    mode: SearchMode
    hits: list[tuple[Hit, MemoryEntry]]
    unembedded_hits: set[int]
    unembedded_count: int
    superseded: dict[str, int] = dataclasses.field(default_factory=dict)  # entry id → when its decision ended


class MemoryArchive:
    def __init__(self, storage: Storage, embedder: Embedder | None, chat: ChatModel | None,
                 prompt: PromptTemplate | None = None, backlog_batch_size: int = 256,
                 retention: Retention = Retention()) -> None:
        self.storage = storage
        # The configured TTLs, stamped on every entry the archive's callers write.
        self.retention = retention
        self.embedder = embedder
        self.chat = chat
        self.prompt = prompt or load_extraction_prompt()
        self.backlog = EmbeddingBacklog(storage, embedder, backlog_batch_size) if embedder is not None else None
        self._index_loading: asyncio.Task[int] | None = None

    async def start(self) -> None:
        """Record the embedding model on first use, or refuse a model other than the recorded one; then
        start embedding the backlog (entries acknowledged before a restart included) and loading the
        in-memory vector and text indexes in the background (the text index alone without embeddings)."""
        if self.embedder is None or self.backlog is None:
            self._index_loading = asyncio.create_task(self.storage.read(memory_text_index.load))
            return
        model, dimension = self.embedder.model_name, self.embedder.dimension
        try:
            missing = await self.storage.write(lambda tx: memory_vectors.prepare_index(tx, model, dimension),
                                               "", "startup")
        except memory_vectors.EmbeddingModelMismatch as error:
            raise ConfigError(str(error)) from None
        if missing:
            log.info("%d memory entries wait for their embedding: the background pass embeds them now", missing)
        self.backlog.start()
        # Load the in-memory indexes now (~1 s of reading at 100k vectors, ~4 s CPU to tokenize 100k entries),
        # not on the first search.
        self._index_loading = asyncio.create_task(self.storage.read(_load_indexes))

    async def stop(self) -> None:
        """Stop the background embedding (what it has not stored stays queued for the next start); wait for the
        indexes' load."""
        if self.backlog is not None:
            await self.backlog.stop()
        if self._index_loading is not None:
            await asyncio.gather(self._index_loading, return_exceptions=True)  # it holds a reader thread

    def entries_written(self) -> None:
        """Entries were just committed without vectors: embed them now rather than at the next poll."""
        if self.backlog is not None:
            self.backlog.notify()

    async def embed(self, texts: Sequence[str]) -> np.ndarray | None:
        if self.embedder is None or not texts:
            return None
        try:
            return await self.embedder.embed(texts)
        except EmbeddingError as error:
            raise EmbeddingUnavailable(str(error)) from error

    async def search(self, namespace: str, query: str, mode: SearchMode, f: MemoryFilter, limit: int,
                     wait_seconds: float = 0.0, recency: RecencyWeights | None = None, as_of: AsOf | None = None,
                     history: bool = False, spread_all: bool = False) -> SearchResult:
        """The hits of the mode that runs, best first, each with its entry. wait_seconds > 0: first wait (that
        long at most) until every entry acknowledged before the call is embedded. recency: re-rank more
        candidates by recency and importance beside relevance (core/memory_recency.py). as_of: among the
        entries written by then (recency counted from then). Decisions superseded by then (by now without
        as_of) are marked and, unless history, rank below every current hit. HYBRID spreads its hits over the
        stretches of a conversation (core.memory_search.spread_over_windows): a hit lowers the neighbours that
        repeat it; spread_all: every neighbour."""
        if mode is SearchMode.SEMANTIC and self.embedder is None:
            raise NotConfigured("embedding_backend", "semantic search needs embeddings (embedding_backend is none)")
        if mode is SearchMode.HYBRID and self.embedder is None:
            mode = SearchMode.FULLTEXT
        if wait_seconds > 0 and self.backlog is not None:
            through = await self.storage.read(memory_backlog.last_entry_seq)
            await self.backlog.wait_embedded(through, wait_seconds)
        vector = None
        if mode is not SearchMode.FULLTEXT:
            with model_work(namespace, ""):
                embedded = await self.embed([query])
            assert embedded is not None
            vector = embedded[0]
        moment = await self.storage.read(resolve, namespace, as_of) if as_of is not None else None
        at = moment.at if moment is not None else None
        if at is not None:  # created_before is exclusive: an entry written at `at` counts
            before = at + 1 if f.created_before is None else min(f.created_before, at + 1)
            f = dataclasses.replace(f, created_before=before)
        words = full_text_query(query)
        pool = rerank_pool(limit) if recency is not None else limit
        found = await self.ranked(namespace, words, vector, mode, f, pool, spread_all)
        superseded = await self._superseded(namespace, found, at)
        if superseded and not history and len(found.hits) == pool:
            # the superseded hits go last: room for as many more current ones
            found = await self.ranked(namespace, words, vector, mode, f, pool + len(superseded), spread_all)
            superseded = await self._superseded(namespace, found, at)
        hits = found.hits
        if recency is not None:
            hits = rerank_by_recency(hits, recency, now_us() if at is None else at, len(hits))
        if not history:
            hits = current_first(hits, lambda hit: hit[1].id in superseded, limit)
        return dataclasses.replace(found, superseded=superseded, hits=hits[:limit])

    async def _superseded(self, namespace: str, found: SearchResult, at: int | None) -> dict[str, int]:
        """Which decision hits no longer held at `at` (None: now); no read when no hit is a decision."""
        decisions = [entry.id for _, entry in found.hits if entry.type is MemoryType.DECISION]
        return await self.storage.read(superseded_entries, namespace, decisions, at) if decisions else {}

    async def ranked(self, namespace: str, query: FullTextQuery, vector: np.ndarray | None, mode: SearchMode,
                     f: MemoryFilter, limit: int, spread_all: bool = False) -> SearchResult:
        """search() once the query is read and embedded. HYBRID runs its two halves at once, each in its own
        reader thread (SQLite and numpy let go of the GIL), so it takes about as long as the slower half
        rather than both; ranking, filtering, fusion and the backlog check are the search store's."""
        embedding = self.embedder is not None
        if mode is not SearchMode.HYBRID or vector is None:
            return await self.storage.read(_search, namespace, query, vector, mode, f, limit, embedding)
        (text, texts), near = await asyncio.gather(
            self.storage.read(memory_search.fulltext_candidates, namespace, query, f, limit),
            self.storage.read(memory_search.semantic_candidates, namespace, vector, f, limit))
        return await self.storage.read(_fuse, namespace, text, texts, near, vector, f, limit, embedding, spread_all)

    async def extract(self, namespace: str, task_id: str, subtask_id: str, calls: Sequence[ToolCall],
                      model_output: str) -> Extraction:
        """Ask the model and check its candidates. Stores nothing (see store_extraction)."""
        if self.chat is None:
            raise NotConfigured(ChatModelNotConfigured().setting, "ExtractMemories needs a utility model")
        await self.storage.read(require_task, namespace, task_id)  # NOT_FOUND before any model call
        system, user = render_prompt(self.prompt, subtask_id, calls, model_output)
        try:
            with model_work(namespace, task_id, Purpose.MEMORY_EXTRACTION):
                reply = await self.chat.complete(system, user)
        except ChatModelBudgetExhausted as error:  # nothing to store without the model: say why, never retry
            raise ResourceExhausted("model_token_budgets", str(error)) from error
        except ChatModelTimeout as error:
            raise ModelTimeout(str(error)) from error
        except ChatModelUnavailable as error:
            raise ModelUnavailable(str(error)) from error
        try:
            items = parse_candidates(reply)
        except NoArrayFound as error:
            log.info("extraction for %s/%s: %s (reply starts %r)", task_id, subtask_id, error, reply[:80])
            return Extraction([], [], 0, f"{error}; the reply began: {reply[:200]!r}")
        valid, dropped = check_candidates(items, task_id, subtask_id)
        return Extraction(valid, dropped, len(items), "")


def _load_indexes(reader: Reader) -> int:
    return memory_vector_index.load(reader) + memory_text_index.load(reader)


def _search(reader: Reader, namespace: str, query: FullTextQuery, vector: np.ndarray | None, mode: SearchMode,
            f: MemoryFilter, limit: int, embedding: bool) -> SearchResult:
    hits = memory_search.search_entries(reader, namespace, query, vector, mode, f, limit)
    return _result(reader, namespace, mode, f, hits, embedding)


def _fuse(reader: Reader, namespace: str, text: str, texts: list[tuple[int, float]], near: list[tuple[int, float]],
          vector: np.ndarray, f: MemoryFilter, limit: int, embedding: bool, spread_all: bool = False) -> SearchResult:
    hits = memory_search.with_entries(reader, namespace,
                                      memory_search.fused_hits(reader, text, texts, near, vector, limit, spread_all))
    return _result(reader, namespace, SearchMode.HYBRID, f, hits, embedding)


def _result(reader: Reader, namespace: str, mode: SearchMode, f: MemoryFilter, hits: list[tuple[Hit, MemoryEntry]],
            embedding: bool) -> SearchResult:
    if not embedding:  # no embedding backend: nothing is waiting for one
        return SearchResult(mode, hits, set(), 0)
    return SearchResult(mode, hits, memory_backlog.queued_among(reader, [hit.seq for hit, _ in hits]),
                        memory_backlog.queued_matching(reader, namespace, f))


def store_extraction(tx: Transaction, entries: Sequence[NewMemoryEntry], subtask_id: str, dropped: int,
                     candidates: int, task_id: str, retention: Retention) -> list[MemoryEntry]:
    """The extraction's writer mutation: its entries (embedded by the backlog after the commit), then one
    MEMORY_EXTRACTION_COMPLETED event."""
    stored = memory_entries.insert_memory_entries(tx, entries, retention=retention)
    tx.emit(EventType.MEMORY_EXTRACTION_COMPLETED, task_id, None,
            {"subtask_id": subtask_id, "stored": len(stored), "dropped": dropped, "candidates": candidates})
    return stored
