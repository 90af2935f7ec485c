"""Serving the web view: a uvicorn server on the gRPC server's own event loop, and its bind rule."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Iterator

import grpc
import uvicorn

from taskmem.config import Config, ConfigError, check_listen_allowed, is_loopback_host
from taskmem.keyring import KeyRing
from taskmem.store.event_log import EventLog
from taskmem.web.app import build_app

# How long stop() lets open pages' streams end before cancelling them.
SHUTDOWN_GRACE_SECONDS = 1
_LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1", "[::1]"]


def split_host_port(listen: str) -> tuple[str, int]:
    host, _, port = listen.rpartition(":")
    try:
        return host.strip("[]"), int(port)
    except ValueError:
        raise ConfigError(f"http_listen: {listen!r} is not host:port") from None


def check_http_bind_allowed(config: Config) -> None:
    """Off loopback the web view needs API keys and TLS (tls_cert_file/tls_key_file serve it too),
    unless --insecure says otherwise: keys typed into the page must not cross a network in clear."""
    check_listen_allowed(config, config.http_listen, tls=bool(config.tls_cert_file and config.tls_key_file),
                         setting="http_listen")


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its own signal handlers: the taskmem process owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebView:
    """The web view of one server: start() binds and returns its URL; stop() ends it."""

    def __init__(self, config: Config, keys: KeyRing, grpc_target: str, events: EventLog) -> None:
        self._config = config
        self._keys = keys
        self.grpc_target = grpc_target
        self._events = events
        self._channel: grpc.aio.Channel | None = None
        self._server: _EmbeddedServer | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> str:
        check_http_bind_allowed(self._config)
        host, port = split_host_port(self._config.http_listen)
        listening = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET)
        self._channel = grpc.aio.insecure_channel(self.grpc_target)
        tls = bool(self._config.tls_cert_file and self._config.tls_key_file)
        app = build_app(self._keys, self._channel, self._events, _LOOPBACK_HOSTS if is_loopback_host(host) else None)
        self._server = _EmbeddedServer(uvicorn.Config(
            app, log_level="warning", lifespan="off", timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
            ssl_certfile=self._config.tls_cert_file if tls else None,
            ssl_keyfile=self._config.tls_key_file if tls else None))
        self._task = asyncio.create_task(self._server.serve(sockets=[listening]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise ConfigError(f"http_listen: could not serve on {self._config.http_listen}")
            await asyncio.sleep(0.01)
        bound = listening.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        return f"{'https' if tls else 'http'}://{shown}:{bound}/"

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
        if self._channel is not None:
            await self._channel.close()
