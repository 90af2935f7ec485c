"""An Embedder that reports each call's latency and outcome to the metrics, and otherwise is the one it wraps."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np

from taskmem.providers.embeddings import Embedder


class MeasuredEmbedder:
    def __init__(self, inner: Embedder, observe: Callable[[str, float], None]) -> None:
        self._inner = inner
        self._observe = observe

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        started, outcome = time.perf_counter(), "error"
        try:
            vectors = await self._inner.embed(texts)
            outcome = "ok"
            return vectors
        finally:
            self._observe(outcome, time.perf_counter() - started)
