"""Shared fixtures: a real server process on a free loopback port with a temporary database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import task_service_pb2_grpc
from tests.support import server_process
from tests.support.server_process import ServerProcess
from tests.support.webhook_receiver import WebhookReceiver


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--engine", choices=("sqlite", "postgres"), default="sqlite",
                     help="the storage engine of every server the tests start (postgres: tests/support/postgres.py)")


def pytest_configure(config: pytest.Config) -> None:
    server_process.ENGINE = config.getoption("engine")
    _import_anyio_up_front()


def _import_anyio_up_front() -> None:
    """Load every module anyio would import lazily, now, while the stack is shallow.

    anyio is a pytest plugin, so pytest's assertion rewriter parses each of its modules on first import,
    and anyio imports its API and its asyncio backend on first use: deep inside a running test (the MCP
    client's subprocess transport), where CPython 3.11.7's ast.parse can fail with "AST constructor
    recursion depth mismatch" (seen once in `make test`)."""
    import importlib

    import anyio

    for name in dir(anyio):
        getattr(anyio, name)
    importlib.import_module("anyio._backends._asyncio")


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server shared by the tests that only need a working service."""
    process = ServerProcess(tmp_path_factory.mktemp("server") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[ServerProcess]:
    """A server of the test's own, for tests that restart, kill or configure it."""
    process = ServerProcess(tmp_path / "taskmem.db")
    yield process
    if process.process is not None and process.process.poll() is None:
        process.stop()


@pytest.fixture
async def channel(server: ServerProcess) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(server.address) as opened:
        yield opened


@pytest.fixture
def tasks(channel: grpc.aio.Channel) -> task_service_pb2_grpc.TaskServiceStub:
    return task_service_pb2_grpc.TaskServiceStub(channel)


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    """A signature-recording webhook receiver on a loopback port (list it as 127.0.0.1:PORT)."""
    found = WebhookReceiver()
    found.start()
    yield found
    found.stop()
