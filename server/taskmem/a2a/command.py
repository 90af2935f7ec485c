"""`taskmem a2a`: its flags, the agent card, the HTTP app (a2a-sdk JSON-RPC and HTTP+JSON routes) and
the gRPC binding (taskmem.a2a.grpc_door).

Same doors as `taskmem mcp --http`: loopback by default, a non-loopback address only with --insecure
(plain HTTP and gRPC without TLS; put a TLS proxy in front), each caller's bearer key forwarded to
taskmem, a key-less caller refused (401, UNAUTHENTICATED) when taskmem checks keys, and an HTTP request
whose Host or Origin is not this endpoint refused (403), so a web page cannot reach it through DNS
rebinding (a browser cannot speak gRPC, so that binding needs no such check).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import socket
import sys
from typing import TYPE_CHECKING

from taskmem.commands.connection import add_token_arguments, bearer_token
from taskmem.config import ConfigError, is_loopback_host

if TYPE_CHECKING:
    from a2a.types.a2a_pb2 import AgentCard
    from starlette.types import ASGIApp, Receive, Scope, Send

READY_LINE = "taskmem a2a: serving on {url}"


def add_a2a_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--address", default="127.0.0.1:50051", help="host:port of the taskmem server")
    add_token_arguments(parser, " (the agent card check at start; callers' own bearers are forwarded)")
    parser.add_argument("--tls", action="store_true", help="connect to taskmem with TLS (system roots)")
    parser.add_argument("--listen", default="127.0.0.1:8700", metavar="HOST:PORT",
                        help="serve A2A here (port 0 picks one; default 127.0.0.1:8700)")
    parser.add_argument("--grpc-listen", default="127.0.0.1:8701", metavar="HOST:PORT",
                        help="serve A2A's gRPC binding here (port 0 picks one; 'off' for none;"
                             " default 127.0.0.1:8701)")
    parser.add_argument("--insecure", action="store_true",
                        help="allow a non-loopback --listen (plain HTTP: bearer keys in clear text)")


@dataclasses.dataclass(frozen=True)
class A2AOptions:
    address: str
    token: str
    tls: bool
    listen: str
    grpc_listen: str  # "" for no gRPC binding
    insecure: bool


def options_from_arguments(args: argparse.Namespace) -> A2AOptions:
    grpc_listen = "" if args.grpc_listen == "off" else args.grpc_listen
    options = A2AOptions(args.address, bearer_token(args), bool(args.tls), args.listen, grpc_listen,
                         bool(args.insecure))
    for flag, listen in (("--listen", options.listen), ("--grpc-listen", options.grpc_listen)):
        if listen and not options.insecure and not is_loopback_host(listen.rpartition(":")[0].strip("[]")):
            raise ConfigError(f"{flag} {listen} is not a loopback address and this endpoint has no TLS;"
                              " serve it on loopback behind a TLS proxy or pass --insecure")
    return options


def agent_card(url: str, grpc_address: str = "") -> AgentCard:
    from a2a.types.a2a_pb2 import AgentCapabilities, AgentCard, AgentInterface, AgentSkill

    return AgentCard(
        name="taskmem", version="0.1.0",
        description="The tasks agents record in taskmem: create them by message, read, list, follow and cancel"
                    " them.",
        supported_interfaces=[AgentInterface(protocol_binding="JSONRPC", url=url, protocol_version="1.0"),
                              AgentInterface(protocol_binding="HTTP+JSON", url=url, protocol_version="1.0"),
                              *([AgentInterface(protocol_binding="GRPC", url=grpc_address, protocol_version="1.0")]
                                if grpc_address else [])],
        capabilities=AgentCapabilities(streaming=True, push_notifications=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain", "application/json"],
        skills=[AgentSkill(id="tasks", name="taskmem tasks", tags=["tasks", "memory"],
                           description="SendMessage (a new task, or a message to one), GetTask, ListTasks,"
                                       " CancelTask, SubscribeToTask and push configs over taskmem's tasks")])


class DoorGate:
    """ASGI middleware: 403 for a Host or Origin other than this endpoint's; 401 for a request without
    a bearer key when taskmem checks keys (a wrong key is taskmem's to refuse)."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str], keys_required: bool) -> None:
        self._app = app
        self._hosts = hosts
        self._keys_required = keys_required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1")
        if host not in self._hosts or (origin and origin.partition("://")[2] not in self._hosts):
            await _refuse(send, 403, b'{"error": "forbidden: this endpoint answers only its own host and origin"}')
            return
        scheme, _, token = headers.get(b"authorization", b"").partition(b" ")
        if self._keys_required and not (scheme.lower() == b"bearer" and token.strip()):
            await _refuse(send, 401, b'{"error": "unauthenticated: send authorization: Bearer <api key>"}')
            return
        await self._app(scope, receive, send)


async def _refuse(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def taskmem_checks_keys(client: object) -> bool:
    """Whether taskmem refuses a call without a key (asked once, with no key, at start)."""
    import grpc

    from taskmem.v1 import task_service_pb2
    from taskmem_client import TaskmemClient, TaskmemError

    assert isinstance(client, TaskmemClient)
    try:
        await client.tasks.ListTasks(task_service_pb2.ListTasksRequest(page_size=1),
                                     metadata=(("authorization", ""),))
    except TaskmemError as error:
        if error.code() == grpc.StatusCode.UNAUTHENTICATED:
            return True
        raise
    return False


async def serve_a2a(options: A2AOptions) -> None:
    import uvicorn
    from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes, create_rest_routes
    from starlette.applications import Starlette

    from taskmem.a2a.grpc_door import start_grpc_door
    from taskmem.a2a.handler import TaskmemRequestHandler
    from taskmem_client import TaskmemClient

    host, _, port = options.listen.rpartition(":")
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host.strip("[]"), int(port)))
    # Listening before the ready line: a client that connects at once waits in the backlog until uvicorn
    # accepts, instead of being refused by a socket that is bound but not yet listening.
    sock.listen(2048)
    bound = f"{host}:{sock.getsockname()[1]}"
    url = f"http://{bound}/"
    hosts = frozenset({bound, f"localhost:{sock.getsockname()[1]}"} if is_loopback_host(host.strip("[]"))
                      else {bound})
    async with TaskmemClient(options.address, token=options.token or None, tls=options.tls) as client:
        handler = TaskmemRequestHandler(client)
        keys_required = await taskmem_checks_keys(client)
        grpc_server, grpc_address = (await start_grpc_door(handler, options.grpc_listen, keys_required)
                                     if options.grpc_listen else (None, ""))
        try:
            card = agent_card(url, grpc_address)
            app = Starlette(routes=[*create_agent_card_routes(card), *create_rest_routes(handler),
                                    *create_jsonrpc_routes(handler, "/")])
            server = uvicorn.Server(uvicorn.Config(DoorGate(app, hosts, keys_required), log_level="warning"))
            print(READY_LINE.format(url=url), file=sys.stderr, flush=True)
            await server.serve(sockets=[sock])
        finally:
            if grpc_server is not None:
                await grpc_server.stop(grace=1)


def run_a2a(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve_a2a(options_from_arguments(args)))
    except ConfigError as error:
        print(f"taskmem a2a: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
