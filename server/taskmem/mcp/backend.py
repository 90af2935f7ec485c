"""The gRPC side of `taskmem mcp`: the stubs, the call metadata, and the embedded server."""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from pathlib import Path
from typing import TypeVar

import grpc
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from mcp.server.mcpserver.exceptions import ToolError

from taskmem.commands.connection import AGENT_HEADER, NAMESPACE_HEADER, ServerOptions
from taskmem.config import Config
from taskmem.keyring import KeyRing
from taskmem.v1 import memory_service_pb2_grpc, state_service_pb2_grpc, task_service_pb2_grpc, wait_service_pb2_grpc

ResponseT = TypeVar("ResponseT", bound=Message)

# One tool call is one or a few unary RPCs; a call that takes longer than this is reported as a
# tool error instead of leaving the model waiting.
CALL_TIMEOUT_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class Caller:
    """An HTTP caller's own bearer key and agent name, forwarded on each of its tool calls."""

    token: str
    agent: str


@dataclasses.dataclass(frozen=True)
class Backend:
    """The four service stubs on one channel, and who the calls act as.

    `token` is the bearer sent when a tool call brings none of its own (stdio); over HTTP each
    call forwards the caller's bearer instead, so the taskmem server authenticates the caller.
    """

    tasks: task_service_pb2_grpc.TaskServiceStub
    waits: wait_service_pb2_grpc.WaitServiceStub
    state: state_service_pb2_grpc.StateServiceStub
    memory: memory_service_pb2_grpc.MemoryServiceStub
    token: str = ""
    namespace: str = ""
    agent: str = ""  # sent as x-taskmem-agent when a call brings none of its own (stdio)
    # The embedded server's keys (followed as its keys file changes); None for a remote server.
    keys: KeyRing | None = None

    async def call(self, method: Callable[..., Awaitable[ResponseT]], request: Message, *,
                   caller: Caller | None = None, fields: Mapping[str, str] | None = None) -> ResponseT:
        """One unary RPC; its failure becomes a ToolError naming the tool argument at fault.

        fields maps a request field the server may name (for example "items[0].text") to the
        tool argument the model wrote (for example "text"). An empty request_id is filled, so the
        server can tell a retried write from a new one.
        """
        if "request_id" in request.DESCRIPTOR.fields_by_name and not getattr(request, "request_id"):
            setattr(request, "request_id", uuid.uuid4().hex)
        metadata: list[tuple[str, str]] = []
        bearer = self.token if caller is None else caller.token
        if bearer:
            metadata.append(("authorization", f"Bearer {bearer}"))
        if self.namespace:
            metadata.append((NAMESPACE_HEADER, self.namespace))
        named = self.agent if caller is None else caller.agent
        if named:
            metadata.append((AGENT_HEADER, named))
        try:
            return await method(request, metadata=tuple(metadata), timeout=CALL_TIMEOUT_SECONDS)
        except grpc.aio.AioRpcError as error:
            raise tool_error(error, fields or {}) from None


def tool_error(error: grpc.aio.AioRpcError, fields: Mapping[str, str]) -> ToolError:
    """"INVALID_ARGUMENT: plan[1].depends_on: item 'b' depends on unknown item 'x'" with the
    request field renamed to the tool's argument. Never a stack trace."""
    details = error.details() or "no details"
    field = _error_field(error)
    if field:
        argument = _argument_for(field, fields)
        if argument != field:
            details = details.replace(field, argument, 1) if details.startswith(field) else f"{argument}: {details}"
        elif not details.startswith(field):
            details = f"{field}: {details}"
    return ToolError(f"{error.code().name}: {details}")


def _error_field(error: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]  # AioRpcError carries the trailers
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info) and info.metadata.get("field"):
            return str(info.metadata["field"])
    return ""


def _argument_for(field: str, fields: Mapping[str, str]) -> str:
    """The longest mapped prefix wins: "items[0].text" → "text", "plan[2].title" stays as is."""
    for prefix in sorted(fields, key=len, reverse=True):
        if field == prefix or field.startswith(prefix + ".") or field.startswith(prefix + "["):
            return fields[prefix] + field[len(prefix):]
    return field


def _channel(options: ServerOptions) -> grpc.aio.Channel:
    if options.tls:
        root = Path(options.tls_ca_file).read_bytes() if options.tls_ca_file else None
        return grpc.aio.secure_channel(options.address, grpc.ssl_channel_credentials(root_certificates=root))
    return grpc.aio.insecure_channel(options.address)


@contextlib.asynccontextmanager
async def connect_backend(options: ServerOptions) -> AsyncIterator[Backend]:
    """A backend on a channel to options.address, closed on exit."""
    async with _channel(options) as channel:
        yield Backend(task_service_pb2_grpc.TaskServiceStub(channel), wait_service_pb2_grpc.WaitServiceStub(channel),
                      state_service_pb2_grpc.StateServiceStub(channel),
                      memory_service_pb2_grpc.MemoryServiceStub(channel),
                      token=options.token, namespace=options.namespace, agent=options.agent)


@contextlib.asynccontextmanager
async def embedded_backend(config: Config, options: ServerOptions) -> AsyncIterator[Backend]:
    """Starts a taskmem server in this process on a free loopback port and connects to it over
    gRPC, so an embedded `taskmem mcp` runs exactly the calls a remote one does."""
    from taskmem.server import TaskmemServer

    Path(config.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    server = TaskmemServer(dataclasses.replace(config, listen="127.0.0.1:0", tls_cert_file="", tls_key_file=""))
    try:
        address = await server.start()
        # As `taskmem serve` does: what start-up built lives as long as the process, so full
        # collections need not walk it again (they stalled tool calls here as they did there).
        gc.freeze()
        # An embedded server with API keys still needs one on its calls: the given token, else its first key.
        assert server.keys is not None
        token = options.token or server.keys.first_secret()
        async with connect_backend(dataclasses.replace(options, address=address, tls=False, token=token)) as backend:
            yield dataclasses.replace(backend, keys=server.keys)
    finally:
        await server.stop()

