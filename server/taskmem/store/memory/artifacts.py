"""Artifact rows: register, list, deregister."""

from __future__ import annotations

from typing import Any

from taskmem.core.artifacts import Artifact, ArtifactType
from taskmem.core.errors import NotFound
from taskmem.core.events import EventType
from taskmem.core.ids import new_id
from taskmem.store.memory.episodes import require_task
from taskmem.store.page_query import PageQuery
from taskmem.store.access import Reader, Row, Transaction


def _from_row(row: Row) -> Artifact:
    return Artifact(namespace=row["namespace"], id=row["id"], task_id=row["task_id"], agent_id=row["agent_id"],
                    type=ArtifactType(row["type"]), path=row["path"], description=row["description"],
                    size_bytes=row["size_bytes"], sha256=row["sha256"], created_at=row["created_at"])


def register(tx: Transaction, task_id: str, agent_id: str, artifact_type: ArtifactType, path: str,
             description: str, size_bytes: int | None, sha256: str) -> Artifact:
    require_task(tx, tx.namespace, task_id)
    artifact = Artifact(tx.namespace, new_id("art"), task_id, agent_id, artifact_type, path, description,
                        size_bytes, sha256, tx.now)
    tx.execute("INSERT INTO artifacts (namespace, id, task_id, agent_id, type, path, description, size_bytes,"
               " sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (artifact.namespace, artifact.id, task_id, agent_id, artifact_type.value, path, description,
                size_bytes, sha256, tx.now))
    tx.emit(EventType.ARTIFACT_REGISTERED, task_id, artifact)
    return artifact


def list_artifacts(db: Reader, namespace: str, task_id: str, artifact_type: ArtifactType | None, path_prefix: str,
                   limit: int, after: list[Any] | None) -> list[Artifact]:
    """Newest first; `after` is the (created_at, id) key of the previous page's last row."""
    query = (PageQuery("artifacts", order=("created_at DESC", "id DESC"))
             .equals("namespace", namespace).equals("task_id", task_id)
             .equals("type", artifact_type.value if artifact_type is not None else None))
    if path_prefix:
        query.where("substr(path, 1, ?) = ?", len(path_prefix), path_prefix)
    return [_from_row(row) for row in query.after(after).fetch(db, limit)]


def delete(tx: Transaction, artifact_id: str) -> Artifact:
    row = tx.fetchone("SELECT * FROM artifacts WHERE namespace = ? AND id = ?", (tx.namespace, artifact_id))
    if row is None:
        raise NotFound("artifact", artifact_id)
    artifact = _from_row(row)
    tx.execute("DELETE FROM artifacts WHERE namespace = ? AND id = ?", (tx.namespace, artifact_id))
    tx.emit(EventType.ARTIFACT_DELETED, artifact.task_id, artifact)
    return artifact
