"""Reading the google.rpc.ErrorInfo the server attaches to every error."""

from __future__ import annotations

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status


def error_info(error: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    assert status is not None, f"no status details on {error.code()}: {error.details()}"
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info
    raise AssertionError("no ErrorInfo detail")


def assert_rpc_error(error: grpc.aio.AioRpcError, code: grpc.StatusCode, reason: str, field: str | None = None) -> None:
    assert error.code() == code, f"{error.code()}: {error.details()}"
    info = error_info(error)
    assert info.domain == "taskmem.dev"
    assert info.reason == reason, info
    if field is not None:
        assert info.metadata["field"] == field, info.metadata
