"""Mutating calls with an optional request_id (AIP-155): a retry returns the first call's stored response."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import Message as ProtoMessage

from taskmem.api import validate
from taskmem.api.scope import current_scope
from taskmem.store import idempotency
from taskmem.store.idempotency import Once
from taskmem.store.storage import Storage
from taskmem.store.access import Transaction

R = TypeVar("R", bound=ProtoMessage)


async def write_once(storage: Storage, request: Any, response_type: type[R],
                     mutation: Callable[[Transaction], R]) -> R:
    """Run mutation in the writer, in the caller's namespace; with a request_id, at most once."""
    scope = current_scope()
    request_id = validate.identifier("request_id", request.request_id, required=False)
    if not request_id:
        return await storage.write(mutation, scope.namespace, scope.correlation_id)
    method = type(request).__name__
    digest = hashlib.sha256(request.SerializeToString(deterministic=True)).hexdigest()

    def once(tx: Transaction) -> R:
        stored = idempotency.stored_response(tx, request_id, method, digest)
        if stored is not None:
            return response_type.FromString(stored)
        response = mutation(tx)
        idempotency.store_response(tx, request_id, method, digest, response.SerializeToString())
        return response

    return await storage.write(once, scope.namespace, scope.correlation_id)


async def earlier_response(storage: Storage, request: Any, response_type: type[R]) -> R | None:
    """The response stored for this request's request_id, if a first run already finished.

    For calls whose work before the write is expensive (a model call): check first, then
    write_once (which checks again, so a concurrent retry still lands once).
    """
    scope = current_scope()
    request_id = validate.identifier("request_id", request.request_id, required=False)
    if not request_id:
        return None
    method = type(request).__name__
    digest = hashlib.sha256(request.SerializeToString(deterministic=True)).hexdigest()

    def look(tx: Transaction) -> bytes | None:
        return idempotency.stored_response(tx, request_id, method, digest)

    stored = await storage.write(look, scope.namespace, scope.correlation_id)
    return None if stored is None else response_type.FromString(stored)


def request_once(request: Any, response_type: type[R]) -> Once[R] | None:
    """The idempotency key of a request with a request_id (None without one), for an engine's write."""
    request_id = validate.identifier("request_id", request.request_id, required=False)
    if not request_id:
        return None
    digest = hashlib.sha256(request.SerializeToString(deterministic=True)).hexdigest()
    return Once(request_id, type(request).__name__, digest, response_type.FromString)
