"""Domain errors. The api ring maps each to a gRPC status and an ErrorReason."""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error a caller can cause. `reason` is an ErrorReason name."""

    reason = "ERROR_REASON_UNSPECIFIED"

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata


class InvalidArgument(DomainError):
    reason = "ERROR_REASON_INVALID_FIELD"

    def __init__(self, field: str, why: str, **metadata: str) -> None:
        super().__init__(f"{field}: {why}", field=field, **metadata)
        self.field = field


class LimitExceeded(InvalidArgument):
    reason = "ERROR_REASON_LIMIT_EXCEEDED"


class PlanCycle(InvalidArgument):
    reason = "ERROR_REASON_PLAN_CYCLE"


class PlanUnknownDependency(InvalidArgument):
    reason = "ERROR_REASON_PLAN_UNKNOWN_DEPENDENCY"


class RequestIdReused(InvalidArgument):
    reason = "ERROR_REASON_REQUEST_ID_REUSED"


class NotFound(DomainError):
    reason = "ERROR_REASON_NOT_FOUND"

    def __init__(self, kind: str, ident: str) -> None:
        super().__init__(f"{kind} {ident!r} not found", resource=kind, id=ident)


class AlreadyExists(DomainError):
    reason = "ERROR_REASON_ALREADY_EXISTS"


class StaleEtag(DomainError):
    reason = "ERROR_REASON_STALE_ETAG"


class IllegalTransition(DomainError):
    reason = "ERROR_REASON_ILLEGAL_TRANSITION"


class FailedPrecondition(DomainError):
    reason = "ERROR_REASON_FAILED_PRECONDITION"


class ClaimNotHeld(FailedPrecondition):
    """A holder acted on a plan item whose claim it does not hold (any more): metadata names who does."""

    reason = "ERROR_REASON_CLAIM_NOT_HELD"

    def __init__(self, item_id: str, holder: str, current: str) -> None:
        now = f"it is held by {current!r}" if current else "nobody holds it now"
        super().__init__(f"plan item {item_id!r} is not held by {holder!r}: {now}", holder_id=current)


class NotConfigured(DomainError):
    reason = "ERROR_REASON_NOT_CONFIGURED"

    def __init__(self, setting: str, why: str) -> None:
        super().__init__(f"{why}: set {setting}", setting=setting)


class AdminRequired(DomainError):
    """The call needs an admin key (PERMISSION_DENIED), such as forcing a wait that resolves by itself."""

    reason = "ERROR_REASON_ADMIN_REQUIRED"


class RoleDenied(DomainError):
    """The caller's key has a role below the one the RPC needs (PERMISSION_DENIED; core/access.py)."""

    reason = "ERROR_REASON_ROLE_DENIED"


class TaskDenied(DomainError):
    """The caller's key is scoped to other tasks (PERMISSION_DENIED). The same answer whether the task named
    exists, lives in another namespace or is missing: it tells nothing about what exists."""

    reason = "ERROR_REASON_TASK_DENIED"


class ModelUnavailable(DomainError):
    """The configured model endpoint failed after retries (UNAVAILABLE)."""

    reason = "ERROR_REASON_MODEL_UNAVAILABLE"


class EmbeddingUnavailable(ModelUnavailable):
    """The embedding backend failed (UNAVAILABLE)."""

    reason = "ERROR_REASON_EMBEDDING_UNAVAILABLE"


class ModelTimeout(DomainError):
    """The model did not answer within the configured time (DEADLINE_EXCEEDED)."""

    reason = "ERROR_REASON_MODEL_TIMEOUT"


class ModelOutputInvalid(DomainError):
    """The model's answer could not be read (UNAVAILABLE)."""

    reason = "ERROR_REASON_MODEL_OUTPUT_INVALID"


class ResourceExhausted(DomainError):
    """A documented limit of what a caller may keep (RESOURCE_EXHAUSTED); `limit` names the setting."""

    reason = "ERROR_REASON_LIMIT_EXCEEDED"

    def __init__(self, limit: str, why: str, **metadata: str) -> None:
        super().__init__(f"{why} (limit {limit})", limit=limit, **metadata)


class OutOfRange(DomainError):
    """A position past the end of what exists, such as a cursor beyond the event log's head (OUT_OF_RANGE)."""

    reason = "ERROR_REASON_INVALID_FIELD"

    def __init__(self, field: str, why: str, **metadata: str) -> None:
        super().__init__(f"{field}: {why}", field=field, **metadata)
