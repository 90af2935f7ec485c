"""Request ids (AIP-155): a retried mutation returns the response stored by its first run."""

from __future__ import annotations

from taskmem.core.errors import RequestIdReused
from taskmem.store.writer import Transaction


def stored_response(tx: Transaction, request_id: str, method: str, request_hash: str) -> bytes | None:
    row = tx.fetchone("SELECT method, request_hash, response FROM request_ids"
                            " WHERE namespace = ? AND request_id = ?", (tx.namespace, request_id))
    if row is None:
        return None
    if row["method"] != method or row["request_hash"] != request_hash:
        raise RequestIdReused("request_id", f"{request_id!r} was already used for a different request")
    return bytes(row["response"])


def store_response(tx: Transaction, request_id: str, method: str, request_hash: str, response: bytes) -> None:
    tx.execute(
        "INSERT INTO request_ids (namespace, request_id, method, request_hash, response, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)", (tx.namespace, request_id, method, request_hash, response, tx.now))
