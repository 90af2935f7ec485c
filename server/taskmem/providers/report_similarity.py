"""How near in meaning a message's finished reports are to its plan's titles: the table plan inference's
meaning link reads (core/plan_inference.py, stage B).

Computed before the write transaction, so the model never runs while the writer waits. Only the
builtin model is used: the link's floor and margin were chosen on its similarities, and another
model's scale differs. With no builtin embedder, or when it fails, there is no table and the link is
by words and outcomes only.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Sequence

import numpy as np

from taskmem.core.plan_inference import OutlineItem, Similarities, unlinked_reports
from taskmem.providers.embeddings import BUILTIN_MODEL_NAME, Embedder, EmbeddingError

log = logging.getLogger(__name__)


class ReportSimilarity:
    """Embeds a message's unlinked reports and its plan's titles (titles cached: a plan's are read often)."""

    def __init__(self, embedder: Embedder | None, titles_cached: int = 4096) -> None:
        self._embedder = embedder if embedder is not None and embedder.model_name == BUILTIN_MODEL_NAME else None
        self._titles: collections.OrderedDict[str, np.ndarray] = collections.OrderedDict()
        self._titles_cached = titles_cached

    async def table(self, items: Sequence[OutlineItem], message: str) -> Similarities | None:
        if self._embedder is None or not items:
            return None
        reports = unlinked_reports(items, message)
        if not reports:
            return None
        titles = list(dict.fromkeys(item.title for item in items))
        missing = [t for t in titles if t not in self._titles]
        try:
            vectors = await self._embedder.embed(reports + missing)
        except EmbeddingError as error:
            log.warning("plan inference links by words only: %s", error)
            return None
        for title, vector in zip(missing, vectors[len(reports):]):
            self._titles[title] = vector
        title_vectors = np.stack([self._titles[t] for t in titles])
        for title in titles:
            self._titles.move_to_end(title)
        while len(self._titles) > self._titles_cached:
            self._titles.popitem(last=False)
        near = vectors[:len(reports)] @ title_vectors.T
        return {(report, title): float(near[i, j])
                for i, report in enumerate(reports) for j, title in enumerate(titles)}
