"""GuardedTransport against a real loopback HTTP server, with the name lookup injected: it resolves
once, refuses what the allow-list does not permit, and connects to the address it checked while the
Host header keeps the name."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator

import httpx
import pytest

from taskmem.outbound_http import DestinationRefused, GuardedTransport


class _EchoHost(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = (self.headers.get("host") or "").encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _EchoHost)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


class _Resolver:
    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> list[str]:
        self.asked.append(host)
        return self.answers[host]


async def _get(allowed: tuple[str, ...], resolver: _Resolver, url: str) -> httpx.Response:
    transport = GuardedTransport(allowed, "webhook_allowed_hosts", resolver=resolver)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        return await client.get(url)


async def test_a_listed_name_that_resolves_to_loopback_is_refused(port: int) -> None:
    resolver = _Resolver({"hooks.example.com": ["127.0.0.1"]})
    with pytest.raises(DestinationRefused, match="resolves to 127.0.0.1 is a loopback address"):
        await _get((f"hooks.example.com:{port}",), resolver, f"http://hooks.example.com:{port}/")


async def test_a_name_with_one_private_answer_among_public_ones_is_refused(port: int) -> None:
    resolver = _Resolver({"hooks.example.com": ["93.184.215.14", "169.254.169.254"]})
    with pytest.raises(DestinationRefused, match="169.254.169.254 is a link-local address"):
        await _get(("hooks.example.com",), resolver, "http://hooks.example.com/")


async def test_the_checked_address_is_connected_to_with_the_name_as_host_and_one_lookup(port: int) -> None:
    # The name's own lookup would fail (.invalid); the request still arrives, at the address checked.
    resolver = _Resolver({"hooks.invalid": ["127.0.0.1"]})
    answer = await _get((f"hooks.invalid:{port}", f"127.0.0.1:{port}"), resolver, f"http://hooks.invalid:{port}/")
    assert answer.status_code == 200 and answer.text == f"hooks.invalid:{port}"
    assert resolver.asked == ["hooks.invalid"]


async def test_a_listed_literal_address_and_port_is_reached_without_a_lookup(port: int) -> None:
    resolver = _Resolver({})
    answer = await _get((f"127.0.0.1:{port}",), resolver, f"http://127.0.0.1:{port}/")
    assert answer.status_code == 200 and resolver.asked == []


async def test_an_unlisted_port_is_refused_before_anything_is_sent(port: int) -> None:
    with pytest.raises(DestinationRefused, match=f"port {port} is not allowed for 127.0.0.1"):
        await _get(("127.0.0.1",), _Resolver({}), f"http://127.0.0.1:{port}/")
