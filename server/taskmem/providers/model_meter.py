"""Who a model call works for, and the meter that admits and records it.

The engines name the work before they reach a model; the model clients read it when they call:

    with model_work(namespace, task_id, Purpose.STATE_EXTRACTION):
        text = await chat.complete(system, user)    # admitted by, then recorded with, the meter

Nested `model_work` keeps what it does not name (an adjudication inside an upsert keeps the upsert's
namespace and task). Work done for several at once (the embedding backlog's batches) names its `shares`:
the call is then recorded once per namespace and task, its tokens split by their weights. A context variable rather than arguments, so the three model clients and the
callers between an engine and them (reconciliation, the router) need not thread it through; asyncio
tasks copy it when they start.
"""

from __future__ import annotations

import contextvars
import dataclasses
from typing import Any, Protocol

from collections.abc import Sequence

from taskmem.core.model_usage import ModelCall, Purpose, Share


@dataclasses.dataclass(frozen=True)
class ModelWork:
    namespace: str = ""
    task_id: str = ""
    purpose: Purpose | None = None
    shares: tuple[Share, ...] = ()


_current: contextvars.ContextVar[ModelWork] = contextvars.ContextVar("taskmem_model_work", default=ModelWork())


class model_work:  # noqa: N801 - used as a context manager, named for what it opens
    """Attribute the model calls made inside to this namespace, task and purpose (None: keep the outer one).
    A plain or an async context manager, so it joins an `async with` of locks on one line."""

    def __init__(self, namespace: str | None = None, task_id: str | None = None,
                 purpose: Purpose | None = None, shares: Sequence[Share] = ()) -> None:
        self._named = (namespace, task_id, purpose)
        self._shares = tuple(shares)
        self._token: contextvars.Token[ModelWork] | None = None

    def __enter__(self) -> ModelWork:
        namespace, task_id, purpose = self._named
        outer = _current.get()
        work = ModelWork(outer.namespace if namespace is None else namespace,
                         outer.task_id if task_id is None else task_id, purpose or outer.purpose,
                         self._shares or outer.shares)
        self._token = _current.set(work)
        return work

    def __exit__(self, *exc: object) -> None:
        assert self._token is not None
        _current.reset(self._token)

    async def __aenter__(self) -> ModelWork:
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.__exit__()


def current_work() -> ModelWork:
    return _current.get()


class ModelMeter(Protocol):
    """Admits model calls against the namespace's budget and records each one (server: usage.meter)."""

    async def refusal(self, work: ModelWork) -> str | None:
        """Why this call must not be made (the namespace's budget is used up), or None to make it."""
        ...

    async def record(self, calls: Sequence[ModelCall]) -> None:
        """Keep the calls (one call, or its parts by share) together; never raises: accounting must not fail
        the work it measures."""
        ...


def reported_usage(answer: Any, out_field: str) -> tuple[int, int]:
    """(prompt_tokens, answer[`usage`][out_field]) of an OpenAI-compatible answer; 0 for what it does not report."""
    usage = answer.get("usage") if isinstance(answer, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    counts = []
    for field in ("prompt_tokens", out_field):
        value = usage.get(field)
        counts.append(value if isinstance(value, int) and value > 0 else 0)
    return counts[0], counts[1]
