"""The meter the model clients report to: it refuses a namespace's model work once its budget is used, and
records every call in the store (GetTaskUsage) and the metrics (by model).

A refusal is said where the skipped step reports (the extraction's event, QueryTask's note, the
adjudication's evidence), and here, once per refused call: a warning and taskmem_model_budget_refusals.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from taskmem.core.model_usage import Budget, ModelCall, refusal
from taskmem.metrics import Metrics
from taskmem.providers.model_meter import ModelWork
from taskmem.store.access import Transaction
from taskmem.store.storage import Storage, WriterClosed
from taskmem.store.usage import model_calls

log = logging.getLogger(__name__)


class StoredMeter:
    def __init__(self, storage: Storage, budgets: Mapping[str, int], metrics: Metrics | None = None) -> None:
        self._storage = storage
        self._budgets = dict(budgets)
        self._metrics = metrics

    def budget_tokens(self, namespace: str) -> int | None:
        """The namespace's configured budget, or None when it has none."""
        return self._budgets.get(namespace)

    async def refusal(self, work: ModelWork) -> str | None:
        limit = self._budgets.get(work.namespace)
        if limit is None:
            return None
        budget = Budget(limit, await self._storage.read(model_calls.namespace_tokens, work.namespace))
        if not budget.exhausted:
            return None
        why = refusal(work.namespace, budget)
        purpose = work.purpose.value if work.purpose else ""
        log.warning("%s (%s, task %s)", why, purpose or "model call", work.task_id or "-")
        if self._metrics is not None:
            self._metrics.model_budget_refusals.labels(purpose).inc()
        return why

    async def record(self, calls: Sequence[ModelCall]) -> None:
        if not calls:
            return
        if self._metrics is not None:
            for call in calls:
                self._metrics.observe_model_usage(call)

        def keep(tx: Transaction) -> None:
            for call in calls:
                model_calls.record_call(tx, call)
        try:
            await self._storage.write(keep, calls[0].namespace, "model-usage")
        except WriterClosed:
            log.info("model call of %s not recorded: the server is stopping", calls[0].model)
        except Exception:  # the call's work is done; losing its accounting row must not undo it
            log.exception("recording a model call of %s failed", calls[0].model)
