"""What the task-state view, BuildContext and QueryTask read about a task, each in one reader call."""

from __future__ import annotations

import dataclasses
import json
import re

from taskmem.core.knowledge import KnowledgeCategory
from taskmem.core.memory import MemoryFilter
from taskmem.core.memory_search import full_text_query
from taskmem.core.messages import Message
from taskmem.core.plans import ItemStatus, Plan, PlanItem, StepQuestion
from taskmem.core.progress import Progress, compute_progress
from taskmem.core.state_notes import StateNotes, state_notes
from taskmem.core.state_records import StoredStateItem
from taskmem.core.tasks import Task
from taskmem.core.waits import WaitStatus
from taskmem.store.tasks import actions as action_store
from taskmem.store.tasks import messages as message_store
from taskmem.store.memory.memory_entries import entries_by_seq
from taskmem.store.memory.memory_search import ranked_matches
from taskmem.store.tasks.messages import message_from_row
from taskmem.store.state import state_items as item_store
from taskmem.store.state.state_item_entries import thread_links
from taskmem.store.state.state_summaries import RunningSummary, running_summary
from taskmem.store.waits.waits import list_waits
from taskmem.store.tasks.tasks import held_claims, load_task, load_task_with_plan
from taskmem.store.access import Reader
from taskmem.store.unexpired import unexpired_sql
from taskmem.store.memory import knowledge as knowledge_store
from taskmem.store.state.view_as_of import open_waits_at

MAX_OPEN_WAITS = 50
KNOWLEDGE_AS_OF_MAX = 500  # entries per category read to rank BuildContext's knowledge as of a moment
MAX_TIME = 2**63 - 1  # no bound on a time column


@dataclasses.dataclass
class ThreadRecord:
    task: Task | None
    plan: Plan | None
    summary: RunningSummary | None
    items: list[StoredStateItem]
    recent: list[Message]  # newest `count`, oldest first


def thread_record(db: Reader, namespace: str, thread_id: str, task_id: str, recent: int,
                  at: int | None = None) -> ThreadRecord:
    """at: as the thread stood then (a running summary written later is left out; task_id must be empty)."""
    task, plan = load_task_with_plan(db, namespace, task_id, 0) if task_id else (None, None)
    summary = running_summary(db, namespace, thread_id)
    if summary is not None and at is not None and summary.updated_at > at:
        summary = None
    return ThreadRecord(task, plan, summary,
                        item_store.thread_items(db, namespace, thread_id, include_superseded=False, at=at),
                        message_store.recent_messages(db, namespace, thread_id, recent, at))


def task_outline(db: Reader, namespace: str, task_id: str) -> tuple[Task, Plan | None]:
    """A task and its current plan with only what the task-state view shows of each item (id, title,
    status, summary, active issue, depends_on): GetTaskState and BuildContext read this on every call,
    and decoding every item's input and times made it the slowest part of both."""
    task = load_task(db, namespace, task_id)
    if not task.plan_version:
        return task, None
    header = db.fetchone("SELECT created_at, reason FROM plans WHERE namespace = ? AND task_id = ? AND version = ?",
                         (namespace, task_id, task.plan_version))
    if header is None:
        return task, None
    rows = db.fetchall(
        "SELECT id, ordinal, title, status, summary, active_issue, depends_on, question_message_id,"
        " question_evidence, question_reason FROM plan_items"
        " WHERE namespace = ? AND task_id = ? AND plan_version = ? ORDER BY ordinal",
        (namespace, task_id, task.plan_version))
    items = [PlanItem(id=r[0], ordinal=r[1], title=r[2], status=ItemStatus(r[3]), summary=r[4], active_issue=r[5],
                      depends_on=json.loads(r[6]) if r[6] != "[]" else [],
                      question=StepQuestion(r[7], r[8], r[9]) if r[7] else None) for r in rows]
    plan = Plan(task_id, task.plan_version, items, header[0], header[1])
    plan.claims = held_claims(db, namespace, plan)
    return task, plan


def messages_since(db: Reader, namespace: str, thread_id: str, summary: RunningSummary | None,
                   limit: int) -> list[Message]:
    """The newest `limit` messages after the running summary (of all, when there is none), oldest first."""
    unexpired, now = unexpired_sql()
    sql = f"SELECT * FROM messages WHERE namespace = ? AND thread_id = ? AND {unexpired}"
    params: list[object] = [namespace, thread_id, *now]
    if summary is not None:
        sql += " AND (created_at > ? OR (created_at = ? AND id > ?))"
        params += [summary.last_message_created_at, summary.last_message_created_at, summary.last_message_id]
    rows = db.fetchall(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])
    return [message_from_row(row) for row in reversed(rows)]


def workspace_changes(db: Reader, namespace: str, task_id: str,
                      at: int | None = None) -> tuple[int, int, int | None]:
    """(distinct artifact paths, registrations of a path seen before, newest registration) of a task;
    at: counting only registrations made by then."""
    row = db.fetchone("SELECT count(DISTINCT path), count(*), max(created_at) FROM artifacts"
                      " WHERE namespace = ? AND task_id = ? AND created_at <= ?",
                      (namespace, task_id, MAX_TIME if at is None else at))
    if row is None or not row[1]:
        return 0, 0, None
    return int(row[0]), int(row[1]) - int(row[0]), row[2]


def namespace_knowledge(db: Reader, namespace: str, categories: list[str], limit: int,
                        at: int | None = None) -> list[tuple[str, str, str]]:
    """(category, key, value) of the namespace's knowledge in these categories, most confident and newest first
    (at: the values that held then)."""
    if at is not None:
        held = [k for c in categories for k in knowledge_store.query(db, namespace, KnowledgeCategory(c), "", "",
                                                                      KNOWLEDGE_AS_OF_MAX, None, at)]
        held.sort(key=lambda k: (-k.confidence, -k.updated_at))
        return [(k.category.value, k.key, k.value) for k in held[:limit]]
    rows = db.fetchall(
        f"SELECT category, key, value FROM knowledge WHERE namespace = ? AND category IN"
        f" ({','.join('?' * len(categories))}) ORDER BY confidence DESC, updated_at DESC LIMIT ?",
        (namespace, *categories, limit))
    return [(row[0], row[1], row[2]) for row in rows]


def search_task_memories(db: Reader, namespace: str, task_id: str, query: str, limit: int,
                         at: int | None = None) -> list[tuple[str, str]]:
    """(type, summary) of the task's memory entries matching any word of query, best first: ranked as
    SearchMemories' FULLTEXT ranks them with the filter task_id (memory_search.ranked_matches: Okapi BM25,
    its statistics over the task's entries, a summary occurrence counting twice a detail one), so both
    engines order them alike. Stop words are left out, as SearchMemories leaves them out. at: among the
    entries written by then."""
    words = [w for w in re.findall(r"\w+", query.lower()) if len(w) > 1][:32]
    if not words:
        return []
    f = MemoryFilter(task_id=task_id, created_before=None if at is None else at + 1)
    hits = ranked_matches(db, namespace, full_text_query(" ".join(words)), f, limit)
    seqs = [seq for seq, _, _ in hits]
    found = entries_by_seq(db, namespace, seqs)
    return [(found[seq].type.value, found[seq].summary) for seq in seqs if seq in found]


def task_notes(db: Reader, namespace: str, task_id: str,
               current: list[StoredStateItem] | None = None, at: int | None = None) -> StateNotes:
    """What the task's reconciled state says now (at: said then): active decisions, constraints, risks,
    open questions, recorded errors and open waits (see core/state_notes). current: the thread's current
    items, when the caller has read them already."""
    if current is None:
        current = item_store.thread_items(db, namespace, task_id, include_superseded=False, at=at)
    waits = (list_waits(db, namespace, task_id, [WaitStatus.WAITING], None, MAX_OPEN_WAITS) if at is None
             else open_waits_at(db, namespace, task_id, at, MAX_OPEN_WAITS))
    return state_notes(current, thread_links(db, namespace, task_id), waits)


def task_progress(db: Reader, namespace: str, task_id: str, recent: int) -> Progress:
    """GetProgress's answer, read in one go: the plan and the record, and the task's reconciled state."""
    task, plan = load_task_with_plan(db, namespace, task_id, 0)
    return compute_progress(task, plan, action_store.last_failed_action(db, namespace, task_id),
                            message_store.recent_messages(db, namespace, task_id, recent),
                            task_notes(db, namespace, task_id))
