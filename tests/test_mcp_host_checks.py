"""MCP over HTTP refuses a foreign Host or Origin (DNS rebinding) on every loopback form it can bind,
checked with real HTTP requests against `taskmem mcp --http` processes."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.mcp_process import McpHttpProcess
from tests.support.server_process import ServerProcess

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "1"}}}
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _can_bind(host: str) -> bool:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


LOOPBACK_FORMS = [pytest.param(host, marks=pytest.mark.skipif(not _can_bind(host.strip("[]")),
                                                              reason=f"{host} cannot be bound here"))
                  for host in ("127.0.0.1", "127.0.0.2", "[::1]", "[0:0:0:0:0:0:0:1]")]


@pytest.fixture(scope="module")
def grpc_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = ServerProcess(tmp_path_factory.mktemp("mcp-hosts") / "taskmem.db")
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.fixture(params=LOOPBACK_FORMS)
def mcp_url(request: pytest.FixtureRequest, grpc_address: str) -> Iterator[str]:
    mcp = McpHttpProcess("--address", grpc_address, host=request.param)
    try:
        yield mcp.start()
    finally:
        mcp.stop()


def _post(url: str, **headers: str) -> httpx.Response:
    # The connection goes to the bound address; only the Host and Origin headers say otherwise.
    with httpx.Client(trust_env=False) as client:
        return client.post(url, json=INITIALIZE, headers={**HEADERS, **headers}, timeout=30)


def test_a_foreign_host_header_is_refused_on_every_loopback_form(mcp_url: str) -> None:
    port = urlsplit(mcp_url).port
    assert _post(mcp_url, host=f"rebound.example:{port}").status_code == 421
    assert _post(mcp_url, host="rebound.example").status_code == 421


def test_a_foreign_origin_is_refused_on_every_loopback_form(mcp_url: str) -> None:
    netloc = urlsplit(mcp_url).netloc
    assert _post(mcp_url, host=netloc, origin="http://rebound.example").status_code == 403
    assert _post(mcp_url, host=netloc, origin=f"http://rebound.example:{urlsplit(mcp_url).port}").status_code == 403


def test_the_bound_host_and_its_own_origin_are_accepted(mcp_url: str) -> None:
    netloc = urlsplit(mcp_url).netloc
    assert _post(mcp_url, host=netloc).status_code == 200
    assert _post(mcp_url, host=netloc, origin=f"http://{netloc}").status_code == 200


def test_a_listed_proxy_host_is_accepted_and_others_still_refused(grpc_address: str) -> None:
    mcp = McpHttpProcess("--address", grpc_address, "--http-allowed-host", "mcp.example.com")
    url = mcp.start()
    try:
        assert _post(url, host="mcp.example.com", origin="https://mcp.example.com").status_code == 200
        assert _post(url, host="mcp.example.com", origin="https://rebound.example").status_code == 403
        assert _post(url, host="other.example.com").status_code == 421
    finally:
        mcp.stop()
