"""The staging half of `taskmem reembed`, shared by both engines: embed memory summaries in seq order,
batch after batch, and hand each batch's vectors to the engine's TEMP table.

Each engine keeps its own SQL (how to read the next summaries, how to stage a vector) and its own swap
transaction; what is the same on both is the walk through the entries, the shape check of every batch
and the progress reports.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from taskmem.providers.embeddings import checked_matrix

# (after seq, at most this many or None for all) -> [(seq, summary), ...] in seq order
SummariesAfter = Callable[[int, int | None], Sequence[Sequence[Any]]]
# [(seq, vector), ...] -> staged in the engine's TEMP table
StageVectors = Callable[[list[tuple[int, np.ndarray]]], None]


class ReembedStaging:
    """Walks the entries once; `stage` may be called again inside the swap transaction to embed what was
    written while the batches ran."""

    def __init__(self, summaries_after: SummariesAfter, stage_vectors: StageVectors,
                 embed: Callable[[list[str]], np.ndarray], model: str, dimension: int,
                 progress: Callable[[int, int], None], total: int) -> None:
        self._summaries_after = summaries_after
        self._stage_vectors = stage_vectors
        self._embed = embed
        self._model = model
        self._dimension = dimension
        self._progress = progress
        self._total = total
        self._last = 0
        self.done = 0
        progress(0, total)

    def stage(self, limit: int | None) -> int:
        """Embed and stage the next `limit` entries (all that are left when None); returns how many."""
        rows = self._summaries_after(self._last, limit)
        if not rows:
            return 0
        matrix = checked_matrix(self._embed([str(row[1]) for row in rows]), len(rows), self._dimension, self._model)
        self._stage_vectors([(int(row[0]), matrix[i]) for i, row in enumerate(rows)])
        self._last = int(rows[-1][0])
        self.done += len(rows)
        self._progress(self.done, max(self._total, self.done))
        return len(rows)

    def stage_all(self, batch: int) -> None:
        """Every entry there is now, `batch` at a time (outside any write transaction)."""
        while self.stage(batch):
            pass
