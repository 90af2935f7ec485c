"""Who is calling: the namespace a call acts in, and the correlation id of its events."""

from __future__ import annotations

import contextvars
import dataclasses
import hmac
from collections.abc import Iterable

from taskmem.config import DEFAULT_NAMESPACE
from taskmem.core.ids import new_id
from taskmem.settings import AuthSettings

NAMESPACE_HEADER = "x-taskmem-namespace"
CORRELATION_HEADER = "x-correlation-id"


@dataclasses.dataclass(frozen=True)
class CallScope:
    namespace: str
    correlation_id: str
    # The bearer key is one of admin_keys: it may force any wait's outcome (ResolveWait).
    admin: bool = False


# Set by the interceptor for the running call; servicers read it with current_scope().
CALL_SCOPE: contextvars.ContextVar[CallScope] = contextvars.ContextVar("taskmem_call_scope")


def current_scope() -> CallScope:
    return CALL_SCOPE.get()


class AuthError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def resolve_scope(auth: AuthSettings, metadata: Iterable[tuple[str, str | bytes]]) -> CallScope:
    """Check the bearer token and pick the namespace; raises AuthError."""
    headers = {key: value for key, value in metadata if isinstance(value, str)}
    asked = headers.get(NAMESPACE_HEADER, "")
    correlation_id = headers.get(CORRELATION_HEADER, "")[:128] or new_id("cor")
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token if scheme.lower() == "bearer" else ""
    # Without api_keys an admin key is still sent as a bearer token; with them it is also one of them.
    admin = bool(token) and any(hmac.compare_digest(token.encode(), key.encode()) for key in auth.admin_keys)
    if auth.open_namespace:
        if asked and asked != DEFAULT_NAMESPACE:
            raise AuthError("ERROR_REASON_NAMESPACE_DENIED",
                            f"this server has no API keys and serves only the {DEFAULT_NAMESPACE!r} namespace")
        return CallScope(DEFAULT_NAMESPACE, correlation_id, admin)
    if not token:
        raise AuthError("ERROR_REASON_UNAUTHENTICATED", "missing 'authorization: Bearer <key>' metadata")
    for key in auth.api_keys:
        if hmac.compare_digest(key.key.encode(), token.encode()):
            namespace = asked or key.namespaces[0]
            if namespace not in key.namespaces:
                raise AuthError("ERROR_REASON_NAMESPACE_DENIED", f"this key may not use namespace {namespace!r}")
            return CallScope(namespace, correlation_id, admin)
    raise AuthError("ERROR_REASON_UNAUTHENTICATED", "unknown API key")
