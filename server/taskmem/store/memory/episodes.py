"""Episode rows: record and list."""

from __future__ import annotations

from typing import Any

from taskmem.core.episodes import Episode, EpisodeAction
from taskmem.core.errors import NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction
from taskmem.store.unexpired import unexpired_sql


def require_task(tx: Reader, namespace: str, task_id: str) -> None:
    if tx.fetchone("SELECT 1 FROM tasks WHERE namespace = ? AND id = ?", (namespace, task_id)) is None:
        raise NotFound("task", task_id)


def episode_from_row(row: Row) -> Episode:
    """An episodes row as the domain record (also used by retention in store/tasks/chores.py)."""
    return Episode(namespace=row["namespace"], id=row["id"], task_id=row["task_id"], agent_id=row["agent_id"],
                   action=EpisodeAction(row["action"]), approach=row["approach"], outcome=row["outcome"],
                   duration_us=row["duration_us"], tokens_in=row["tokens_in"], tokens_out=row["tokens_out"],
                   created_at=row["created_at"], archived_at=row["archived_at"], expires_at=row["expires_at"])


def record(tx: Transaction, task_id: str, agent_id: str, action: EpisodeAction, approach: str, outcome: str,
           duration_us: int | None, tokens_in: int, tokens_out: int, expires_at: int | None = None) -> Episode:
    require_task(tx, tx.namespace, task_id)
    episode = Episode(tx.namespace, new_id("epi"), task_id, agent_id, action, approach, outcome, duration_us,
                      tokens_in, tokens_out, tx.now, expires_at=expires_at)
    tx.execute("INSERT INTO episodes (namespace, id, task_id, agent_id, action, approach, outcome, duration_us,"
               " tokens_in, tokens_out, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (episode.namespace, episode.id, task_id, agent_id, action.value, approach, outcome, duration_us,
                tokens_in, tokens_out, tx.now, expires_at))
    tx.emit(EventType.EPISODE_RECORDED, task_id, episode).expires_at = expires_at
    return episode


def list_episodes(db: Reader, namespace: str, task_id: str, agent_id: str, action: EpisodeAction | None,
                  limit: int, after: list[Any] | None, include_archived: bool = False) -> list[Episode]:
    """Newest first; `after` is the (created_at, id) key of the previous page's last row. Episodes
    archived by retention are left out unless include_archived; expired ones always."""
    unexpired, now = unexpired_sql()
    query = (PageQuery("episodes", order=("created_at DESC", "id DESC")).equals("namespace", namespace)
             .where(unexpired, *now))
    if not include_archived:
        query.where("archived_at IS NULL")
    rows = (query.equals("task_id", task_id).equals("agent_id", agent_id)
            .equals("action", action.value if action else None).after(after).fetch(db, limit))
    return [episode_from_row(row) for row in rows]

