"""Request ids (AIP-155): a retried mutation returns the response stored by its first run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from taskmem.core.errors import RequestIdReused
from taskmem.store.access import Transaction

R = TypeVar("R", bound=Any)  # a protobuf response message (it has SerializeToString)


def stored_response(tx: Transaction, request_id: str, method: str, request_hash: str) -> bytes | None:
    if tx.dialect == "postgres":
        # Two replicas running the same retry at once: the second waits here until the first commits, then
        # finds its response (without the lock both would miss it, and the second insert would fail).
        tx.execute("SELECT pg_advisory_xact_lock(hashtextextended(? || '/' || ?, 0))", (tx.namespace, request_id))
    # Stored by an earlier mutation of this batch (its row deferred), or by an earlier batch.
    stored = tx.memo.get(("request id", tx.namespace, request_id))
    if stored is None:
        row = tx.fetchone_stored("SELECT method, request_hash, response FROM request_ids"
                                 " WHERE namespace = ? AND request_id = ?", (tx.namespace, request_id))
        if row is None:
            return None
        stored = (row["method"], row["request_hash"], bytes(row["response"]))
    if stored[0] != method or stored[1] != request_hash:
        raise RequestIdReused("request_id", f"{request_id!r} was already used for a different request")
    return stored[2]


def store_response(tx: Transaction, request_id: str, method: str, request_hash: str, response: bytes) -> None:
    tx.memo[("request id", tx.namespace, request_id)] = (method, request_hash, response)
    tx.defer(
        "request_ids", "INSERT INTO request_ids (namespace, request_id, method, request_hash, response, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?)", (tx.namespace, request_id, method, request_hash, response, tx.now))


@dataclasses.dataclass(frozen=True)
class Once(Generic[R]):
    """A request's idempotency key (AIP-155) and how its response is read back: an engine runs a
    mutation with it so that a retry returns the first run's response and writes nothing."""

    request_id: str
    method: str
    request_hash: str
    parse: Callable[[bytes], R]


def run_once(tx: Transaction, once: Once[R] | None, respond: Callable[[], R]) -> R:
    """respond()'s response, stored under once's key; a retry's stored response instead (respond not run)."""
    if once is None:
        return respond()
    stored = stored_response(tx, once.request_id, once.method, once.request_hash)
    if stored is not None:
        return once.parse(stored)
    response = respond()
    store_response(tx, once.request_id, once.method, once.request_hash, response.SerializeToString())
    return response
