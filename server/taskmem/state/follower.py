"""Background work that follows committed events, off the request path:

- the per-task YAML mirror (state_yaml_mirror_dir): rewritten atomically after every change of a task;
- running summaries (a thread's story so far, for BuildContext's summary section): with a chat model configured, regenerated once a thread has
  running_summary_every_messages new messages since its last summary.

Events of every namespace are followed. A burst of events for one task costs one rewrite.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from taskmem.core.events import Event, EventFilter, EventType
from taskmem.core.model_usage import Purpose
from taskmem.core.state_prompts import SUMMARY_SYSTEM, summary_user_prompt
from taskmem.providers.chat import ChatModelBudgetExhausted
from taskmem.providers.model_meter import model_work
from taskmem.store.state import state_summaries, view_reads
from taskmem.store.event_log import EventLogClosed
from taskmem.store.state.state_summaries import RunningSummary
from taskmem.store.tasks.tasks import find_task
from taskmem.store.access import Reader, Transaction
from taskmem.store.storage import WriterClosed

if TYPE_CHECKING:
    from taskmem.state.engine import StateEngine

log = logging.getLogger(__name__)

MIRROR_BUDGET = 1500
SUMMARY_MESSAGES = 200


@dataclasses.dataclass(frozen=True)
class _EveryNamespace(EventFilter):
    """Task changes and posted messages of every namespace."""

    def matches(self, event: Event) -> bool:
        return bool(event.task_id) or event.type is EventType.MESSAGE_POSTED


def write_atomically(path: Path, text: str) -> None:
    """Write to a temporary file beside path, fsync it, rename it over path, fsync the directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False,
                                     encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(handle.name, path)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


class StateFollower:
    def __init__(self, engine: StateEngine) -> None:
        self._engine = engine
        self._task: asyncio.Task[None] | None = None
        self._summaries: dict[tuple[str, str], asyncio.Task[None]] = {}
        # Threads with messages posted while their summary run was busy: the run checks again before it ends
        # (its last check may have read before those messages were committed).
        self._posted_during_run: set[tuple[str, str]] = set()
        settings = engine.settings
        self._mirror_dir = Path(settings.yaml_mirror_dir) if settings.yaml_mirror_dir else None
        self._summary_every = settings.running_summary_every_messages if engine.chat is not None else 0

    def start(self) -> None:
        if self._mirror_dir is not None or self._summary_every:
            self._task = asyncio.create_task(self._run(), name="taskmem-state-follower")

    async def stop(self) -> None:
        for task in [self._task, *self._summaries.values()]:
            if task is not None:
                task.cancel()
        await asyncio.gather(*(t for t in [self._task, *self._summaries.values()] if t), return_exceptions=True)

    def mirror_path(self, namespace: str, task_id: str) -> Path | None:
        return self._mirror_dir / namespace / f"{task_id}.yaml" if self._mirror_dir else None

    async def _run(self) -> None:
        try:
            with self._engine.storage.events.watch(_EveryNamespace(namespace="")) as changes:
                while True:
                    events = [await changes.queue.get()]
                    while not changes.queue.empty():
                        events.append(changes.queue.get_nowait())
                    if None in events and changes.closed:
                        return
                    await self._handle([e for e in events if e is not None])
        except (EventLogClosed, WriterClosed):
            return

    async def _handle(self, events: list[Event]) -> None:
        tasks = dict.fromkeys((e.namespace, e.task_id) for e in events if e.task_id)
        threads = dict.fromkeys((e.namespace, str(e.payload.get("thread_id", e.task_id)))
                                for e in events if e.type is EventType.MESSAGE_POSTED)
        if self._mirror_dir is not None:
            for namespace, task_id in tasks:
                await self._mirror(namespace, task_id)
        if self._summary_every:
            for key in threads:
                running = self._summaries.get(key)
                if running is None or running.done():
                    self._summaries[key] = asyncio.create_task(self._summarize(*key))
                else:
                    self._posted_during_run.add(key)

    async def _mirror(self, namespace: str, task_id: str) -> None:
        path = self.mirror_path(namespace, task_id)
        assert path is not None
        try:
            text, _, _ = await self._engine.task_state(namespace, task_id, MIRROR_BUDGET)
            await asyncio.to_thread(write_atomically, path, text)
        except Exception:  # one task's mirror failing must not stop the others
            log.exception("could not write the state mirror of task %s", task_id)

    async def _summarize(self, namespace: str, thread_id: str) -> None:
        key = (namespace, thread_id)
        try:
            # Messages posted during a run start no run of their own (one runs per thread at a time), so the
            # run checks again after each summary it writes, and once more if messages came while it checked.
            while True:
                self._posted_during_run.discard(key)
                while await self.summarize_if_due(namespace, thread_id):
                    pass
                if key not in self._posted_during_run:
                    return
        except (asyncio.CancelledError, WriterClosed):
            raise
        except Exception:
            log.exception("running summary of thread %s failed; the next message tries again", thread_id)

    async def summarize_if_due(self, namespace: str, thread_id: str) -> bool:
        engine = self._engine
        due = await engine.storage.read(_summary_due, namespace, thread_id, self._summary_every)
        if due is None:
            return False
        record, since, count = due
        assert engine.chat is not None and since
        task_line = f"Task: {record.task.name} — {record.task.goal}" if record.task else f"Thread: {thread_id}"
        plan_lines = [f"- {i.id} [{i.status.value.removeprefix('PLAN_ITEM_STATUS_').lower()}] {i.title}"
                      for i in (record.plan.items if record.plan else [])]
        previous = record.summary.summary if record.summary else ""
        try:
            with model_work(namespace, thread_id, Purpose.RUNNING_SUMMARY):
                text = await engine.chat.complete(SUMMARY_SYSTEM,
                                                  summary_user_prompt(task_line, plan_lines, previous, since),
                                                  timeout=engine.settings.model_timeout_seconds)
        except ChatModelBudgetExhausted:
            return False  # the meter logged and counted the refusal; the summary stays as it was
        last = since[-1]
        summary = RunningSummary(thread_id, text.strip(), count, last.created_at, last.id, 0)

        def save(tx: Transaction) -> None:
            state_summaries.save_running_summary(tx, dataclasses.replace(summary, updated_at=tx.now))
            tx.emit(EventType.RUNNING_SUMMARY_UPDATED, record.task.id if record.task else "", None,
                    {"thread_id": thread_id, "summary": summary.summary, "message_count": count})

        await engine.storage.write(save, namespace, "running-summary")
        return True


def _summary_due(db: Reader, namespace: str, thread_id: str,
                 every: int) -> tuple[view_reads.ThreadRecord, list, int] | None:
    count = state_summaries.message_count(db, namespace, thread_id)
    summary = state_summaries.running_summary(db, namespace, thread_id)
    if count - (summary.message_count if summary else 0) < every:
        return None
    is_task = find_task(db, namespace, thread_id) is not None
    record = view_reads.thread_record(db, namespace, thread_id, thread_id if is_task else "", 0)
    since = view_reads.messages_since(db, namespace, thread_id, summary, SUMMARY_MESSAGES)
    return record, since, count
