"""Domain errors → gRPC status codes with a google.rpc.ErrorInfo detail (AIP-193)."""

from __future__ import annotations


import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from taskmem.core import errors
from taskmem.store.event_log import EventLogClosed
from taskmem.store.storage import WriterClosed


DOMAIN = "taskmem.dev"

_CODES: list[tuple[type[errors.DomainError], grpc.StatusCode]] = [
    (errors.InvalidArgument, grpc.StatusCode.INVALID_ARGUMENT),
    (errors.NotFound, grpc.StatusCode.NOT_FOUND),
    (errors.AlreadyExists, grpc.StatusCode.ALREADY_EXISTS),
    (errors.StaleEtag, grpc.StatusCode.ABORTED),
    (errors.IllegalTransition, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.FailedPrecondition, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.NotConfigured, grpc.StatusCode.FAILED_PRECONDITION),
    (errors.AdminRequired, grpc.StatusCode.PERMISSION_DENIED),
    (errors.RoleDenied, grpc.StatusCode.PERMISSION_DENIED),
    (errors.TaskDenied, grpc.StatusCode.PERMISSION_DENIED),
    (errors.ModelUnavailable, grpc.StatusCode.UNAVAILABLE),
    (errors.ModelTimeout, grpc.StatusCode.DEADLINE_EXCEEDED),
    (errors.ModelOutputInvalid, grpc.StatusCode.UNAVAILABLE),
    (errors.ResourceExhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (errors.OutOfRange, grpc.StatusCode.OUT_OF_RANGE),
]


# A status travels in the trailers, whose size a client limits (gRPC's default: 8 KiB, counting the message
# twice, once in grpc-message and once inside grpc-status-details-bin). An error naming a caller's long key
# (a Struct path such as "metadata.<20,000 characters>") would exceed it, and the caller would get
# RESOURCE_EXHAUSTED "Stream removed" instead of the error. So the message and each ErrorInfo metadata value
# are cut in the middle to these many UTF-8 bytes, keeping how the text starts and ends (the field's root
# and the reason).
MESSAGE_MAX_BYTES = 1024
METADATA_VALUE_MAX_BYTES = 512


def status_for(code: grpc.StatusCode, message: str, reason: str, metadata: dict[str, str]) -> grpc.Status:
    detail = any_pb2.Any()
    detail.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata={
        key: cut_middle(value, METADATA_VALUE_MAX_BYTES) for key, value in metadata.items()}))
    return rpc_status.to_status(status_pb2.Status(code=code.value[0], message=cut_middle(message, MESSAGE_MAX_BYTES),
                                                  details=[detail]))


def cut_middle(text: str, max_bytes: int) -> str:
    """text if it is at most max_bytes in UTF-8; else its start and end around "…", within max_bytes."""
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    keep = max_bytes - len("…".encode())
    head = encoded[:keep * 3 // 5].decode(errors="ignore")
    tail = encoded[len(encoded) - (keep - keep * 3 // 5):].decode(errors="ignore")
    return f"{head}…{tail}"


def status_of(error: Exception) -> grpc.Status | None:
    """The status of a domain error (or a shutdown), None for anything unmapped: a defect."""
    if isinstance(error, errors.DomainError):
        code = next(c for kind, c in _CODES if isinstance(error, kind))
        return status_for(code, error.message, error.reason, error.metadata)
    if isinstance(error, (WriterClosed, EventLogClosed)):
        return status_for(grpc.StatusCode.UNAVAILABLE, str(error), "ERROR_REASON_SHUTTING_DOWN", {})
    return None
