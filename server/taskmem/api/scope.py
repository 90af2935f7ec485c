"""Who is calling: the key and its role, the namespace a call acts in, and what its events record."""

from __future__ import annotations

import contextvars
import dataclasses
from collections.abc import Iterable

from taskmem.config import DEFAULT_NAMESPACE
from taskmem.core.access import KeyEntry, Role
from taskmem.core.audit import Actor
from taskmem.core.ids import new_id
from taskmem.keyring import KeyRing
from taskmem.settings import AuthSettings

NAMESPACE_HEADER = "x-taskmem-namespace"
CORRELATION_HEADER = "x-correlation-id"
# The caller's own name for the agent making the call; events record it beside the key's id.
AGENT_HEADER = "x-taskmem-agent"
AGENT_ID_MAX = 128


@dataclasses.dataclass(frozen=True)
class CallScope:
    namespace: str
    correlation_id: str
    # The bearer key is one of admin_keys: it may force any wait's outcome (ResolveWait).
    admin: bool = False
    # The caller's key; None when the server checks no keys (every caller may do everything).
    key: KeyEntry | None = None
    agent_id: str = ""

    @property
    def role(self) -> Role:
        return self.key.role if self.key is not None else Role.ADMIN

    @property
    def key_id(self) -> str:
        return self.key.id if self.key is not None else ""

    @property
    def actor(self) -> Actor:
        return Actor(self.key_id, self.agent_id)


# Set by the interceptor for the running call; servicers read it with current_scope().
CALL_SCOPE: contextvars.ContextVar[CallScope] = contextvars.ContextVar("taskmem_call_scope")


def current_scope() -> CallScope:
    return CALL_SCOPE.get()


class AuthError(Exception):
    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def resolve_scope(keys: KeyRing | AuthSettings, metadata: Iterable[tuple[str, str | bytes]]) -> CallScope:
    """Check the bearer token and pick the namespace; raises AuthError. (AuthSettings: a fixed set of keys.)"""
    if isinstance(keys, AuthSettings):
        keys = KeyRing.of(keys)
    headers = {key: value for key, value in metadata if isinstance(value, str)}
    asked = headers.get(NAMESPACE_HEADER, "")
    correlation_id = headers.get(CORRELATION_HEADER, "")[:128] or new_id("cor")
    agent_id = headers.get(AGENT_HEADER, "").strip()[:AGENT_ID_MAX]
    scheme, _, token = headers.get("authorization", "").partition(" ")
    token = token if scheme.lower() == "bearer" else ""
    # Without api_keys an admin key is still sent as a bearer token; with them it is also one of them.
    admin = keys.forces_waits(token)
    if keys.open:
        if asked and asked != DEFAULT_NAMESPACE:
            raise AuthError("ERROR_REASON_NAMESPACE_DENIED",
                            f"this server has no API keys and serves only the {DEFAULT_NAMESPACE!r} namespace")
        return CallScope(DEFAULT_NAMESPACE, correlation_id, admin, None, agent_id)
    if not token:
        raise AuthError("ERROR_REASON_UNAUTHENTICATED", "missing 'authorization: Bearer <key>' metadata")
    key = keys.find(token)
    if key is None:
        raise AuthError("ERROR_REASON_UNAUTHENTICATED", "unknown API key")
    namespace = asked or key.namespaces[0]
    if namespace not in key.namespaces:
        raise AuthError("ERROR_REASON_NAMESPACE_DENIED", f"this key may not use namespace {namespace!r}")
    return CallScope(namespace, correlation_id, admin, key, agent_id)
