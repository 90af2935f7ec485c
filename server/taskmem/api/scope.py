"""Who is calling: the namespace a call acts in, and the correlation id of its events."""

from __future__ import annotations

import contextvars
import hmac
from collections.abc import Iterable

from taskmem.config import DEFAULT_NAMESPACE
from taskmem.core.ids import new_id
from taskmem.settings import AuthSettings

NAMESPACE_HEADER = "x-taskmem-namespace"
CORRELATION_HEADER = "x-correlation-id"


class CallScope:
    """The caller's namespace; its correlation id (the caller's x-correlation-id, else one minted when first
    read: a read never needs one, and every call of a busy server resolves a scope); whether its bearer key
    is one of admin_keys (it may force any wait's outcome, ResolveWait)."""

    __slots__ = ("namespace", "admin", "_correlation_id")

    def __init__(self, namespace: str, correlation_id: str = "", admin: bool = False) -> None:
        self.namespace = namespace
        self.admin = admin
        self._correlation_id = correlation_id

    @property
    def correlation_id(self) -> str:
        if not self._correlation_id:
            self._correlation_id = new_id("cor")
        return self._correlation_id

    def __repr__(self) -> str:
        return f"CallScope({self.namespace!r}, {self._correlation_id!r}, admin={self.admin})"


# Set by the interceptor for the running call; servicers read it with current_scope().
CALL_SCOPE: contextvars.ContextVar[CallScope] = contextvars.ContextVar("taskmem_call_scope")


def current_scope() -> CallScope:
    return CALL_SCOPE.get()


class AuthError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


_HEADERS = frozenset((NAMESPACE_HEADER, CORRELATION_HEADER, "authorization"))


def resolve_scope(auth: AuthSettings, metadata: Iterable[tuple[str, str | bytes]]) -> CallScope:
    """Check the bearer token and pick the namespace; raises AuthError."""
    headers = {key: value for key, value in metadata if key in _HEADERS and isinstance(value, str)}
    asked = headers.get(NAMESPACE_HEADER, "")
    correlation_id = headers.get(CORRELATION_HEADER, "")[:128]
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
