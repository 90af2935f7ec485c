"""Checkpoints and pending writes (core/checkpoints.py): their rows, the thread → task attachment, copies
(a fork of the thread's task, as ForkTask makes it), deletions and retention's sweep.

Each mutation emits its event on the thread's task in the same transaction. Reads leave out a checkpoint
whose expire time has passed, from that instant, whether or not maintenance has deleted it yet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from taskmem.core import checkpoints as core
from taskmem.core.checkpoints import Checkpoint, PendingWrite, PruneStrategy, Serialized
from taskmem.core.errors import FailedPrecondition, InvalidArgument, NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.core.tasks import Task, TaskStatus
from taskmem.store.access import Reader, Row, Transaction
from taskmem.store.tasks import forks as fork_store
from taskmem.store.tasks.tasks import create_task, find_task, load_task

_COLUMNS = ("thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, task_id, value_type, value, metadata,"
            " step, source, run_id, created_at, expires_at")
_STEP_COLUMNS = ("thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, task_id, value_type, NULL AS value,"
                 " metadata, step, source, run_id, created_at, expires_at")
_UNEXPIRED = "(expires_at IS NULL OR expires_at > ?)"
_WRITE_COLUMNS = "checkpoint_id, graph_task_id, idx, channel, value_type, value, graph_task_path"
# The most checkpoint ids one statement names (SQLite allows 32,766 parameters).
_CHUNK = 500


# --- threads -----------------------------------------------------------------------------------

def thread_task_id(db: Reader, namespace: str, thread_id: str) -> str | None:
    row = db.fetchone("SELECT task_id FROM checkpoint_threads WHERE namespace = ? AND thread_id = ?",
                      (namespace, thread_id))
    return str(row[0]) if row else None


def attach_thread(tx: Transaction, thread_id: str, requested_task_id: str, name_limit: int) -> str:
    """The task the thread belongs to, attaching it on its first checkpoint: to requested_task_id, else to the
    task whose id is the thread id, else to a new task."""
    key = ("checkpoint_thread", thread_id)
    attached = tx.memo.get(key) or thread_task_id(tx, tx.namespace, thread_id)
    if attached is not None:
        if requested_task_id and requested_task_id != attached:
            raise FailedPrecondition(f"checkpoint thread {thread_id!r} belongs to task {attached!r},"
                                     f" not {requested_task_id!r}")
        tx.memo[key] = attached
        return attached
    if requested_task_id:
        task_id = load_task(tx, tx.namespace, requested_task_id).id
    elif (same := find_task(tx, tx.namespace, thread_id)) is not None:
        task_id = same.id
    else:
        task_id = _create_thread_task(tx, thread_id, name_limit).id
    tx.execute("INSERT INTO checkpoint_threads (namespace, thread_id, task_id, created_at) VALUES (?, ?, ?, ?)",
               (tx.namespace, thread_id, task_id, tx.now))
    tx.memo[key] = task_id
    return task_id


def _create_thread_task(tx: Transaction, thread_id: str, name_limit: int) -> Task:
    task = Task(namespace=tx.namespace, id=new_id("tsk"), name=core.thread_task_name(thread_id, name_limit),
                status=TaskStatus.EXECUTING, created_at=tx.now, updated_at=tx.now, execution_started_at=tx.now)
    task, _ = create_task(tx, task, [])
    return task


# --- writes ------------------------------------------------------------------------------------

def put_checkpoint(tx: Transaction, checkpoint: Checkpoint, requested_task_id: str, name_limit: int,
                   parent_expires_at: int | None) -> Checkpoint:
    """Store (or replace) the checkpoint on its thread's task; its parent expires at parent_expires_at."""
    assert checkpoint.value is not None
    task_id = attach_thread(tx, checkpoint.thread_id, requested_task_id, name_limit)
    stored = Checkpoint(
        checkpoint.thread_id, checkpoint.checkpoint_ns, checkpoint.checkpoint_id, checkpoint.parent_checkpoint_id,
        task_id, checkpoint.value, checkpoint.metadata_json, checkpoint.step, checkpoint.source, checkpoint.run_id,
        tx.now)
    tx.execute(
        f"INSERT INTO checkpoints (namespace, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)"
        " ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET"
        " parent_checkpoint_id = excluded.parent_checkpoint_id, value_type = excluded.value_type,"
        " value = excluded.value, metadata = excluded.metadata, step = excluded.step, source = excluded.source,"
        " run_id = excluded.run_id, created_at = excluded.created_at, expires_at = NULL",
        (tx.namespace, stored.thread_id, stored.checkpoint_ns, stored.checkpoint_id, stored.parent_checkpoint_id,
         task_id, stored.value.type, stored.value.data, stored.metadata_json, stored.step, stored.source,
         stored.run_id, tx.now))
    if parent_expires_at is not None and stored.parent_checkpoint_id:
        tx.execute("UPDATE checkpoints SET expires_at = ? WHERE namespace = ? AND thread_id = ?"
                   " AND checkpoint_ns = ? AND checkpoint_id = ? AND expires_at IS NULL",
                   (parent_expires_at, tx.namespace, stored.thread_id, stored.checkpoint_ns,
                    stored.parent_checkpoint_id))
    tx.emit(EventType.CHECKPOINT_PUT, task_id, None, checkpoint_json(stored))
    return stored


def put_writes(tx: Transaction, thread_id: str, checkpoint_ns: str, checkpoint_id: str,
               writes: Sequence[PendingWrite], name_limit: int) -> int:
    """Store the writes (a repeated non-negative idx is ignored, a negative one replaces); returns how many
    were stored or replaced."""
    task_id = attach_thread(tx, thread_id, "", name_limit)
    stored = 0
    for write in writes:
        key = (tx.namespace, thread_id, checkpoint_ns, checkpoint_id, write.graph_task_id, write.idx)
        exists = tx.fetchone("SELECT 1 FROM checkpoint_writes WHERE namespace = ? AND thread_id = ?"
                             " AND checkpoint_ns = ? AND checkpoint_id = ? AND graph_task_id = ? AND idx = ?", key)
        if exists is not None and not write.replaces:
            continue
        tx.execute(
            "INSERT INTO checkpoint_writes (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx,"
            " channel, value_type, value, graph_task_path, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx) DO UPDATE SET"
            " channel = excluded.channel, value_type = excluded.value_type, value = excluded.value,"
            " graph_task_path = excluded.graph_task_path, created_at = excluded.created_at",
            (*key, write.channel, write.value.type, write.value.data, write.graph_task_path, tx.now))
        stored += 1
    tx.emit(EventType.CHECKPOINT_WRITES_PUT, task_id, None, {
        "thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id,
        "writes": [{"graph_task_id": w.graph_task_id, "idx": w.idx, "channel": w.channel, "type": w.value.type,
                    "size_bytes": len(w.value.data)} for w in writes]})
    return stored


# --- reads -------------------------------------------------------------------------------------

def get_checkpoint(db: Reader, namespace: str, thread_id: str, checkpoint_ns: str, checkpoint_id: str,
                   now: int) -> Checkpoint | None:
    """The checkpoint (checkpoint_id ""): the namespace's newest) with its pending writes; None if none."""
    by_id = " AND checkpoint_id = ?" if checkpoint_id else ""
    row = db.fetchone(f"SELECT {_COLUMNS} FROM checkpoints WHERE namespace = ? AND thread_id = ?"
                      f" AND checkpoint_ns = ?{by_id} AND {_UNEXPIRED} ORDER BY checkpoint_id DESC LIMIT 1",
                      (namespace, thread_id, checkpoint_ns, *([checkpoint_id] if checkpoint_id else []), now))
    if row is None:
        return None
    checkpoint = _checkpoint(row)
    writes = _writes_of(db, namespace, thread_id, checkpoint_ns, [checkpoint.checkpoint_id])
    return _with_writes(checkpoint, writes.get(checkpoint.checkpoint_id, []))


def list_checkpoints(db: Reader, namespace: str, now: int, *, thread_id: str, checkpoint_ns: str | None,
                     task_id: str, before: str, metadata_filter: dict[str, Any], omit_values: bool,
                     after_key: list[Any] | None, limit: int) -> list[Checkpoint]:
    """Up to `limit` matching checkpoints after the sort key (checkpoint_id, thread_id, checkpoint_ns), newest
    first, with their writes unless omit_values."""
    where, params = ["namespace = ?", _UNEXPIRED], [namespace, now]
    for column, value in (("thread_id", thread_id), ("task_id", task_id)):
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if checkpoint_ns is not None:
        where.append("checkpoint_ns = ?")
        params.append(checkpoint_ns)
    if before:
        where.append("checkpoint_id < ?")
        params.append(before)
    found: list[Checkpoint] = []
    # A metadata filter is matched here, on pages of rows, until enough match.
    page = limit if not metadata_filter else max(limit, 100)
    while len(found) < limit:
        key_clause = ["(checkpoint_id, thread_id, checkpoint_ns) < (?, ?, ?)"] if after_key else []
        rows = db.fetchall(
            f"SELECT {_STEP_COLUMNS if omit_values else _COLUMNS} FROM checkpoints"
            f" WHERE {' AND '.join(where + key_clause)}"
            " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC LIMIT ?",
            [*params, *(after_key or []), page])
        for row in rows:
            checkpoint = _checkpoint(row)
            if core.matches_filter(checkpoint.metadata_json, metadata_filter):
                found.append(checkpoint)
                if len(found) == limit:
                    break
        if len(rows) < page:
            break
        last = _checkpoint(rows[-1])
        after_key = [last.checkpoint_id, last.thread_id, last.checkpoint_ns]
    return found if omit_values else _attach_writes(db, namespace, found)


def _attach_writes(db: Reader, namespace: str, checkpoints: list[Checkpoint]) -> list[Checkpoint]:
    groups: dict[tuple[str, str], list[str]] = {}
    for c in checkpoints:
        groups.setdefault((c.thread_id, c.checkpoint_ns), []).append(c.checkpoint_id)
    writes: dict[tuple[str, str, str], list[PendingWrite]] = {}
    for (thread_id, checkpoint_ns), ids in groups.items():
        for checkpoint_id, found in _writes_of(db, namespace, thread_id, checkpoint_ns, ids).items():
            writes[(thread_id, checkpoint_ns, checkpoint_id)] = found
    return [_with_writes(c, writes.get((c.thread_id, c.checkpoint_ns, c.checkpoint_id), [])) for c in checkpoints]


def _writes_of(db: Reader, namespace: str, thread_id: str, checkpoint_ns: str,
               checkpoint_ids: list[str]) -> dict[str, list[PendingWrite]]:
    found: dict[str, list[PendingWrite]] = {}
    for start in range(0, len(checkpoint_ids), _CHUNK):
        ids = checkpoint_ids[start:start + _CHUNK]
        rows = db.fetchall(
            f"SELECT {_WRITE_COLUMNS} FROM checkpoint_writes WHERE namespace = ? AND thread_id = ?"
            f" AND checkpoint_ns = ? AND checkpoint_id IN ({', '.join('?' * len(ids))})",
            (namespace, thread_id, checkpoint_ns, *ids))
        for row in rows:
            found.setdefault(str(row[0]), []).append(PendingWrite(
                str(row[1]), int(row[2]), str(row[3]), Serialized(str(row[4]), bytes(row[5])), str(row[6])))
    return {key: sorted(writes, key=core.write_order) for key, writes in found.items()}


def _with_writes(checkpoint: Checkpoint, writes: list[PendingWrite]) -> Checkpoint:
    if not writes:
        return checkpoint
    return Checkpoint(checkpoint.thread_id, checkpoint.checkpoint_ns, checkpoint.checkpoint_id,
                      checkpoint.parent_checkpoint_id, checkpoint.task_id, checkpoint.value, checkpoint.metadata_json,
                      checkpoint.step, checkpoint.source, checkpoint.run_id, checkpoint.created_at,
                      checkpoint.expires_at, tuple(writes))


def _checkpoint(row: Row) -> Checkpoint:
    value = Serialized(str(row[5]), bytes(row[6])) if row[6] is not None else None
    return Checkpoint(str(row[0]), str(row[1]), str(row[2]), str(row[3]), str(row[4]), value, str(row[7]),
                      int(row[8]), str(row[9]), str(row[10]), int(row[11]),
                      int(row[12]) if row[12] is not None else None)


def checkpoint_json(c: Checkpoint) -> dict[str, Any]:
    """An event's payload: the checkpoint without its value and writes, plus its value's size."""
    return {"thread_id": c.thread_id, "checkpoint_ns": c.checkpoint_ns, "checkpoint_id": c.checkpoint_id,
            "parent_checkpoint_id": c.parent_checkpoint_id, "task_id": c.task_id, "metadata_json": c.metadata_json,
            "step": c.step, "source": c.source, "run_id": c.run_id, "size_bytes": c.size_bytes}


# --- deletions ---------------------------------------------------------------------------------

def delete_thread(tx: Transaction, thread_id: str) -> int:
    """Delete every checkpoint and write of the thread; returns how many checkpoints went."""
    task_id = thread_task_id(tx, tx.namespace, thread_id)
    if task_id is None:
        return 0
    count = _count(tx, "thread_id = ?", [thread_id])
    tx.execute("DELETE FROM checkpoint_writes WHERE namespace = ? AND thread_id = ?", (tx.namespace, thread_id))
    tx.execute("DELETE FROM checkpoints WHERE namespace = ? AND thread_id = ?", (tx.namespace, thread_id))
    tx.emit(EventType.CHECKPOINTS_DELETED, task_id, None,
            {"thread_id": thread_id, "reason": "thread", "deleted_count": count})
    return count


def delete_runs(tx: Transaction, run_ids: Sequence[str]) -> int:
    """Delete the checkpoints (and their writes) of the runs, in every thread; returns how many went."""
    rows = tx.fetchall(f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id FROM checkpoints"
                       f" WHERE namespace = ? AND run_id IN ({', '.join('?' * len(run_ids))})",
                       (tx.namespace, *run_ids))
    _delete_rows(tx, rows, "runs")
    return len(rows)


def prune(tx: Transaction, thread_ids: Sequence[str], strategy: PruneStrategy) -> int:
    """Keep each namespace's newest checkpoint of the threads (KEEP_LATEST) or none (DELETE); returns how many
    checkpoints went."""
    keep = (" AND checkpoint_id < (SELECT max(c.checkpoint_id) FROM checkpoints c WHERE c.namespace ="
            " checkpoints.namespace AND c.thread_id = checkpoints.thread_id AND c.checkpoint_ns ="
            " checkpoints.checkpoint_ns)") if strategy is PruneStrategy.KEEP_LATEST else ""
    rows = tx.fetchall(f"SELECT thread_id, checkpoint_ns, checkpoint_id, task_id FROM checkpoints WHERE namespace = ?"
                       f" AND thread_id IN ({', '.join('?' * len(thread_ids))}){keep}", (tx.namespace, *thread_ids))
    _delete_rows(tx, rows, "prune")
    if strategy is PruneStrategy.DELETE:  # writes to no stored checkpoint go too
        tx.execute(f"DELETE FROM checkpoint_writes WHERE namespace = ?"
                   f" AND thread_id IN ({', '.join('?' * len(thread_ids))})", (tx.namespace, *thread_ids))
    return len(rows)


def delete_expired(tx: Transaction, page: int) -> int:
    """Retention: delete up to `page` of tx.namespace's expired checkpoints and their writes."""
    rows = tx.fetchall("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id FROM checkpoints"
                       " WHERE expires_at <= ? AND namespace = ? ORDER BY expires_at LIMIT ?",
                       (tx.now, tx.namespace, page))
    _delete_rows(tx, rows, "retention")
    return len(rows)


def namespaces_with_expired(db: Reader, now: int) -> list[str]:
    return [str(row[0]) for row in db.fetchall("SELECT DISTINCT namespace FROM checkpoints WHERE expires_at <= ?",
                                               (now,))]


def _delete_rows(tx: Transaction, rows: Iterable[Row], reason: str) -> None:
    """Delete the (thread_id, checkpoint_ns, checkpoint_id, task_id) rows' checkpoints and writes; one event per
    thread."""
    by_thread: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for row in rows:
        by_thread.setdefault((str(row[0]), str(row[3])), []).append((str(row[1]), str(row[2])))
    for (thread_id, task_id), keys in by_thread.items():
        for checkpoint_ns, checkpoint_id in keys:
            params = (tx.namespace, thread_id, checkpoint_ns, checkpoint_id)
            tx.execute("DELETE FROM checkpoint_writes WHERE namespace = ? AND thread_id = ? AND checkpoint_ns = ?"
                       " AND checkpoint_id = ?", params)
            tx.execute("DELETE FROM checkpoints WHERE namespace = ? AND thread_id = ? AND checkpoint_ns = ?"
                       " AND checkpoint_id = ?", params)
        tx.emit(EventType.CHECKPOINTS_DELETED, task_id, None,
                {"thread_id": thread_id, "reason": reason, "deleted_count": len(keys)})


def _count(tx: Transaction, condition: str, params: list[Any]) -> int:
    row = tx.fetchone(f"SELECT count(*) FROM checkpoints WHERE namespace = ? AND {condition}", (tx.namespace, *params))
    return int(row[0]) if row else 0


# --- copies ------------------------------------------------------------------------------------

def copy_thread(tx: Transaction, source: str, target: str, up_to: str, name: str,
                name_limit: int) -> tuple[Task, int]:
    """Copy the source thread's checkpoints (those no newer than up_to, when given) and their writes to the
    target thread. A new target thread's task is a fork of the source's task, taken at the newest copied
    checkpoint (store/tasks/forks.py); returns the target's task and how many checkpoints were copied."""
    if source == target:
        raise InvalidArgument("target_thread_id", "is the source thread")
    source_task = thread_task_id(tx, tx.namespace, source)
    bound = ["checkpoint_id <= ?"] if up_to else []
    bound_params = [up_to] if up_to else []
    if up_to and tx.fetchone(f"SELECT 1 FROM checkpoints WHERE namespace = ? AND thread_id = ? AND checkpoint_ns = ''"
                             f" AND checkpoint_id = ? AND {_UNEXPIRED}", (tx.namespace, source, up_to, tx.now)) is None:
        raise NotFound("checkpoint", f"{source}/{up_to}")
    newest = tx.fetchone(
        f"SELECT max(created_at), count(*) FROM checkpoints WHERE namespace = ? AND thread_id = ? AND {_UNEXPIRED}"
        + "".join(f" AND {b}" for b in bound), (tx.namespace, source, tx.now, *bound_params))
    if source_task is None or newest is None or not newest[1]:
        raise NotFound("checkpoint thread", source)
    target_task_id = thread_task_id(tx, tx.namespace, target)
    if target_task_id is None:
        task = _fork_for_copy(tx, source_task, int(newest[0]), name or core.thread_task_name(target, name_limit),
                              name_limit)
        tx.execute("INSERT INTO checkpoint_threads (namespace, thread_id, task_id, created_at) VALUES (?, ?, ?, ?)",
                   (tx.namespace, target, task.id, tx.now))
        tx.memo[("checkpoint_thread", target)] = task.id
    else:
        task = load_task(tx, tx.namespace, target_task_id)
    condition = f"namespace = ? AND thread_id = ? AND {_UNEXPIRED}" + "".join(f" AND {b}" for b in bound)
    tx.execute(
        f"INSERT INTO checkpoints (namespace, {_COLUMNS}) SELECT namespace, ?, checkpoint_ns, checkpoint_id,"
        " parent_checkpoint_id, ?, value_type, value, metadata, step, source, run_id, created_at, expires_at"
        f" FROM checkpoints WHERE {condition}"
        " ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id) DO UPDATE SET"
        " parent_checkpoint_id = excluded.parent_checkpoint_id, value_type = excluded.value_type,"
        " value = excluded.value, metadata = excluded.metadata, step = excluded.step, source = excluded.source,"
        " run_id = excluded.run_id, created_at = excluded.created_at, expires_at = excluded.expires_at",
        (target, task.id, tx.namespace, source, tx.now, *bound_params))
    write_bound = " AND w.checkpoint_id <= ?" if up_to else ""
    tx.execute(
        "INSERT INTO checkpoint_writes (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx,"
        " channel, value_type, value, graph_task_path, created_at) SELECT w.namespace, ?, w.checkpoint_ns,"
        " w.checkpoint_id, w.graph_task_id, w.idx, w.channel, w.value_type, w.value, w.graph_task_path, w.created_at"
        f" FROM checkpoint_writes w WHERE w.namespace = ? AND w.thread_id = ?{write_bound}"
        " ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id, graph_task_id, idx) DO UPDATE SET"
        " channel = excluded.channel, value_type = excluded.value_type, value = excluded.value,"
        " graph_task_path = excluded.graph_task_path, created_at = excluded.created_at",
        (target, tx.namespace, source, *bound_params))
    count = int(newest[1])
    payload = {"source_thread_id": source, "target_thread_id": target, "checkpoint_id": up_to,
               "copied_count": count, "target_task_id": task.id}
    tx.emit(EventType.CHECKPOINT_THREAD_COPIED, source_task, None, payload)
    if task.id != source_task:
        tx.emit(EventType.CHECKPOINT_THREAD_COPIED, task.id, None, payload)
    return task, count


def _fork_for_copy(tx: Transaction, source_task: str, at: int, name: str, name_limit: int) -> Task:
    """ForkTask of the source's task just after its newest event no later than the checkpoint (0: its newest)."""
    row = tx.fetchone("SELECT max(cursor) FROM events WHERE namespace = ? AND task_id = ? AND created_at <= ?",
                      (tx.namespace, source_task, at))
    cursor = int(row[0]) if row is not None and row[0] is not None else 0
    fork, _ = fork_store.fork_task(tx, source_task, cursor, name, name_limit)
    return fork
