"""How a client command reaches the server: its flags, the channel and the call metadata."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import grpc

from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub

DEFAULT_ADDRESS = "127.0.0.1:50051"
NAMESPACE_HEADER = "x-taskmem-namespace"
AGENT_HEADER = "x-taskmem-agent"
# Where a client command finds its API key when neither --token nor --token-file gives it.
TOKEN_VARIABLE = "TASKMEM_TOKEN"
# A unary call that takes longer than this is reported as DEADLINE_EXCEEDED rather than hanging.
UNARY_TIMEOUT_SECONDS = 30.0


@dataclasses.dataclass(frozen=True)
class ServerOptions:
    address: str = DEFAULT_ADDRESS
    token: str = ""
    namespace: str = ""
    tls: bool = False
    tls_ca_file: str = ""
    # Sent as x-taskmem-agent: the events of this process's writes record it beside the key's id.
    agent: str = ""

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> ServerOptions:
        return cls(address=args.address, token=bearer_token(args), namespace=args.namespace or "",
                   tls=bool(args.tls or args.tls_ca_file), tls_ca_file=args.tls_ca_file or "")

    def call_metadata(self) -> tuple[tuple[str, str], ...]:
        """The metadata every call carries: the bearer token and the namespace, when given."""
        metadata: list[tuple[str, str]] = []
        if self.token:
            metadata.append(("authorization", f"Bearer {self.token}"))
        if self.namespace:
            metadata.append((NAMESPACE_HEADER, self.namespace))
        if self.agent:
            metadata.append((AGENT_HEADER, self.agent))
        return tuple(metadata)


def _token_file(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {error.strerror}") from None


def add_token_arguments(group: argparse._ArgumentGroup, note: str = "") -> None:
    """--token and --token-file; with neither, the key comes from TASKMEM_TOKEN (bearer_token)."""
    group.add_argument("--token", help=f"API key, sent as 'authorization: Bearer <token>'{note}. Visible in ps:"
                                       f" prefer --token-file or {TOKEN_VARIABLE}")
    group.add_argument("--token-file", dest="token_from_file", type=_token_file, metavar="PATH",
                       help=f"read the API key from this file (default: {TOKEN_VARIABLE}, if set)")


def bearer_token(args: argparse.Namespace, environ: Mapping[str, str] = os.environ) -> str:
    """--token, else --token-file's key, else TASKMEM_TOKEN, else none."""
    return args.token or getattr(args, "token_from_file", None) or environ.get(TOKEN_VARIABLE, "")


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every client command shares."""
    group = parser.add_argument_group("server connection")
    group.add_argument("--address", default=DEFAULT_ADDRESS,
                       help=f"host:port of the server (default {DEFAULT_ADDRESS})")
    add_token_arguments(group)
    group.add_argument("--namespace", help="namespace to act in (default: the key's first namespace)")
    group.add_argument("--tls", action="store_true", help="connect with TLS, verifying against the system roots")
    group.add_argument("--tls-ca-file", help="connect with TLS, verifying the server against this CA certificate")


@dataclasses.dataclass(frozen=True)
class TaskClient:
    """The service stubs plus the keyword arguments their calls need:
    `await client.stub.GetTask(request, **client.unary)`, `client.stub.SubscribeEvents(request, **client.stream)`,
    `await client.state.RenderState(request, **client.unary)`, `await client.memory.SearchMemories(...)`."""

    stub: TaskServiceStub
    metadata: tuple[tuple[str, str], ...]
    state: StateServiceStub
    memory: MemoryServiceStub

    @property
    def unary(self) -> dict[str, Any]:
        return {"metadata": self.metadata, "timeout": UNARY_TIMEOUT_SECONDS}

    @property
    def stream(self) -> dict[str, Any]:
        return {"metadata": self.metadata}


@contextlib.asynccontextmanager
async def connect(options: ServerOptions) -> AsyncIterator[TaskClient]:
    if options.tls:
        root = Path(options.tls_ca_file).read_bytes() if options.tls_ca_file else None
        channel = grpc.aio.secure_channel(options.address, grpc.ssl_channel_credentials(root_certificates=root))
    else:
        channel = grpc.aio.insecure_channel(options.address)
    async with channel:
        yield TaskClient(TaskServiceStub(channel), options.call_metadata(), StateServiceStub(channel),
                         MemoryServiceStub(channel))
