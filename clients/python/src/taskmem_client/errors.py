"""Errors of taskmem calls: the gRPC code plus the server's google.rpc.ErrorInfo (AIP-193)."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2, status_pb2

ERROR_DOMAIN = "taskmem.dev"
_STATUS_DETAILS_KEY = "grpc-status-details-bin"


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo the server attached to error (domain taskmem.dev preferred), or None."""
    found: error_details_pb2.ErrorInfo | None = None
    for key, value in error.trailing_metadata() or ():
        if key != _STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                if info.domain == ERROR_DOMAIN:
                    return info
                found = found or info
    return found


RETRY_PUSHBACK_KEY = "grpc-retry-pushback-ms"


def retry_delay(error: grpc.aio.AioRpcError) -> float | None:
    """The pause in seconds the server asked for before a retry (an overloaded server's refusal):
    grpc-retry-pushback-ms, else google.rpc.RetryInfo in the status details; None when it asked none."""
    for key, value in error.trailing_metadata() or ():
        if key == RETRY_PUSHBACK_KEY and isinstance(value, str) and value.isdigit():
            return int(value) / 1000
    for key, value in error.trailing_metadata() or ():
        if key != _STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        for detail in status_pb2.Status.FromString(value).details:
            info = error_details_pb2.RetryInfo()
            if detail.Unpack(info):
                return info.retry_delay.ToTimedelta().total_seconds()
    return None


class TaskmemError(grpc.aio.AioRpcError):
    """A failed call. Still a grpc.aio.AioRpcError (code(), details(), trailing_metadata()),
    plus the ErrorInfo: `reason` is an ErrorReason name such as "ERROR_REASON_INVALID_FIELD",
    `field` the request field a bad request names. Match on reasons, not messages."""

    @classmethod
    def wrap(cls, error: grpc.aio.AioRpcError) -> TaskmemError:
        if isinstance(error, TaskmemError):
            return error
        return cls(error.code(), error.initial_metadata(), error.trailing_metadata(), error.details(),
                   error.debug_error_string())

    @property
    def error_info(self) -> error_details_pb2.ErrorInfo | None:
        return error_info(self)

    @property
    def reason(self) -> str:
        """The ErrorReason name, or "" when the error carries no ErrorInfo (for example a network failure)."""
        info = self.error_info
        return info.reason if info is not None else ""

    @property
    def field(self) -> str | None:
        """The request field an INVALID_ARGUMENT names (for example "plan[2].depends_on"), or None."""
        info = self.error_info
        return info.metadata.get("field") if info is not None else None

    def __str__(self) -> str:
        reason = f" [{self.reason}]" if self.reason else ""
        return f"{self.code().name}: {self.details()}{reason}"
