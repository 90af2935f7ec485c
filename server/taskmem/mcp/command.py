"""`taskmem mcp`: its flags, and serving the tools over stdio or streamable HTTP.

The MCP SDK and the server are imported only when `taskmem mcp` runs: the parser is built for
every `taskmem` command, and importing them costs seconds on a busy machine.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import logging
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from taskmem.commands.connection import ServerOptions, add_token_arguments, bearer_token
from taskmem.config import Config, ConfigError, is_loopback_host, load_config
from taskmem.keyring import KeyRing

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from taskmem.mcp.backend import Backend

# With no --address and no database configured, the embedded server keeps its file here, so an MCP
# host that starts `taskmem mcp` from any directory finds the same memory.
DEFAULT_EMBEDDED_DATABASE = Path.home() / ".local" / "share" / "taskmem" / "taskmem.db"
HTTP_READY_LINE = "taskmem mcp: serving on http://{address}/mcp"
MCP_PATH = "/mcp"


def add_mcp_arguments(parser: argparse.ArgumentParser) -> None:
    remote = parser.add_argument_group("a running taskmem server (default: start an embedded one)")
    remote.add_argument("--address", help="host:port of a taskmem server to use instead of an embedded one")
    add_token_arguments(remote, " (stdio; over HTTP each caller's own bearer is forwarded)")
    remote.add_argument("--namespace", help="namespace to act in (default: the key's first namespace)")
    remote.add_argument("--agent", help="the agent's name, sent as x-taskmem-agent: events record it beside the"
                                        " key's id (stdio; over HTTP each caller's own x-taskmem-agent is forwarded)")
    remote.add_argument("--tls", action="store_true", help="connect with TLS, verifying against the system roots")
    remote.add_argument("--tls-ca-file", help="connect with TLS, verifying the server against this CA certificate")
    embedded = parser.add_argument_group("the embedded server")
    embedded.add_argument("--database", help=f"SQLite file (default {DEFAULT_EMBEDDED_DATABASE})")
    embedded.add_argument("--config", help="YAML file of server settings (or TASKMEM_CONFIG), as for taskmem serve")
    transport = parser.add_argument_group("transport (default: stdio)")
    transport.add_argument("--http", metavar="HOST:PORT",
                           help=f"serve streamable HTTP at http://HOST:PORT{MCP_PATH} instead of stdio (port 0 picks one)")
    transport.add_argument("--http-allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                           help="with --http, also accept this Host header (as written, e.g. the public name of a TLS"
                                " proxy in front); the bound address, and for loopback localhost, 127.0.0.1 and ::1,"
                                " are always accepted, any other Host or Origin is refused (DNS rebinding)")
    transport.add_argument("--insecure", action="store_true",
                           help="allow --http on a non-loopback address (plain HTTP: bearer keys in clear text)")


@dataclasses.dataclass(frozen=True)
class McpOptions:
    server: ServerOptions
    embedded: Config | None  # None: talk to server.address
    http: str = ""
    http_allowed_hosts: tuple[str, ...] = ()
    insecure: bool = False


def options_from_arguments(args: argparse.Namespace) -> McpOptions:
    server = ServerOptions(address=args.address or "", token=bearer_token(args), namespace=args.namespace or "",
                           tls=bool(args.tls or args.tls_ca_file), tls_ca_file=args.tls_ca_file or "",
                           agent=args.agent or "")
    embedded = None
    if not args.address:
        embedded = load_config(file=args.config, flags={"database": args.database})
        if embedded.database == Config.database and not args.database:
            embedded = dataclasses.replace(embedded, database=str(DEFAULT_EMBEDDED_DATABASE))
    options = McpOptions(server=server, embedded=embedded, http=args.http or "",
                         http_allowed_hosts=tuple(args.http_allowed_host), insecure=args.insecure)
    check_http_bind_allowed(options)
    return options


def check_http_bind_allowed(options: McpOptions) -> None:
    """A non-loopback HTTP endpoint needs --insecure: it speaks plain HTTP, so callers' bearer keys would
    cross the network in clear text (and with no keys anyone could call it). Put a TLS proxy in front
    of a loopback endpoint instead."""
    if not options.http or options.insecure:
        return
    host = options.http.rpartition(":")[0]
    if is_loopback_host(host):
        return
    if options.embedded is None or options.embedded.open_namespace:
        raise ConfigError(f"--http {options.http} is not a loopback address and no API keys are checked here;"
                          " configure api_keys for the embedded server or pass --insecure")
    raise ConfigError(f"--http {options.http} is not a loopback address and this endpoint has no TLS, so API keys"
                      " would cross the network in clear text; serve it on loopback behind a TLS proxy or pass"
                      " --insecure")


@contextlib.asynccontextmanager
async def open_backend(options: McpOptions) -> AsyncIterator[Backend]:
    from taskmem.mcp.backend import connect_backend, embedded_backend

    if options.embedded is None:
        async with connect_backend(options.server) as backend:
            yield backend
    else:
        async with embedded_backend(options.embedded, options.server) as backend:
            yield backend


class BearerGate:
    """ASGI middleware: with keys, every HTTP request needs 'authorization: Bearer <one of them>' (401
    otherwise). Without keys it lets requests through and the taskmem server checks the forwarded bearer.

    keys: the embedded server's keys as they are now (its keys file is followed), so a removed key is
    refused here as soon as the server has read the file again; None for a remote server."""

    def __init__(self, app: ASGIApp, keys: KeyRing | None) -> None:
        self._app = app
        self._keys = keys if keys is not None and not keys.open else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._keys is not None and not self._allowed(scope):
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body",
                        "body": b'{"error": "unauthenticated: send authorization: Bearer <api key>"}'})
            return
        await self._app(scope, receive, send)

    def _allowed(self, scope: Scope) -> bool:
        header = dict(scope.get("headers") or ()).get(b"authorization", b"")
        scheme, _, token = header.partition(b" ")
        assert self._keys is not None
        return scheme.lower() == b"bearer" and self._keys.find(token.strip().decode(errors="replace")) is not None


async def serve_mcp(options: McpOptions) -> None:
    import anyio

    from taskmem.mcp.tools import build_mcp_server

    async with open_backend(options) as backend:
        server = build_mcp_server(backend)
        if not options.http:
            await server.run_stdio_async()
            return
        import uvicorn

        from taskmem.mcp.host_check import transport_security

        host, _, port = options.http.rpartition(":")
        bound = _bind(host.strip("[]"), int(port))
        bound_port = bound.getsockname()[1]
        security = transport_security(host, bound_port, options.http_allowed_hosts)
        app = BearerGate(server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security),
                         backend.keys)
        http = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        async with anyio.create_task_group() as group:
            group.start_soon(http.serve, [bound])
            while not http.started:
                if http.should_exit:
                    return
                await anyio.sleep(0.02)
            print(HTTP_READY_LINE.format(address=f"{host}:{bound_port}"), file=sys.stderr, flush=True)


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound before the app is built: the Host check needs the port (--http HOST:0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    if host == "localhost":
        host = "127.0.0.1"
    bound = socket.socket(family, socket.SOCK_STREAM)
    bound.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        bound.bind((host, port))
    except OSError as error:
        bound.close()
        raise ConfigError(f"--http {host}:{port}: {error}") from None
    return bound


def run_mcp(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    import anyio

    try:
        options = options_from_arguments(args)
        anyio.run(serve_mcp, options)
    except ConfigError as error:
        print(f"taskmem mcp: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
