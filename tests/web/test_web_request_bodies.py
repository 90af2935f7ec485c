"""The web view checks the key before it reads a body, and reads at most 4 MB of one (issue 27, point 2).

Over a raw socket, so a test can announce a body it never sends, or stream one in chunks, and see what the
server answers without waiting for the rest.
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

import pytest

from tests.web.conftest import KEY_A

MAX_BODY_BYTES = 4 * 1024 * 1024  # web/app.py's cap, as gRPC's largest message
CALL = "/api/call/TaskService/ListTasks"


def exchange(web_url: str, path: str, headers: dict[str, str], body: bytes = b"", *,
             chunks: int = 0, chunk: bytes = b"") -> tuple[int, dict[str, object]]:
    """Send the head (and `body`, or `chunks` chunked pieces), then read the answer: (status, JSON body).
    Sending stops quietly if the server closes first; it may answer before it has read. The socket's timeout
    is only a hang guard."""
    address = urlsplit(web_url)
    with socket.create_connection((address.hostname, address.port), timeout=30) as connection:
        head = [f"POST {path} HTTP/1.1", f"host: {address.hostname}", "x-taskmem-web: 1",
                "content-type: application/json", "connection: close",
                *(f"{name}: {value}" for name, value in headers.items())]
        try:
            connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            for _ in range(chunks):
                connection.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = bytearray()
        try:
            while piece := connection.recv(65536):
                answer += piece
        except ConnectionResetError:
            pass
    status_line, _, rest = bytes(answer).partition(b"\r\n")
    payload = rest.partition(b"\r\n\r\n")[2]
    return int(status_line.split()[1]), json.loads(payload or b"{}")


@pytest.mark.parametrize("path", [CALL, "/api/batch"])
def test_a_body_without_a_key_is_refused_before_it_is_read(web_url: str, path: str) -> None:
    status, reply = exchange(web_url, path, {"content-length": str(300_000_000)})
    # Answered at all: none of the 300 MB announced is ever sent, so a server that read first never answers
    # (the socket's timeout is then the hang guard).
    assert (status, reply["code"]) == (401, "UNAUTHENTICATED")


@pytest.mark.parametrize("path", [CALL, "/api/batch"])
def test_an_announced_body_over_the_cap_is_413_before_it_is_read(web_url: str, path: str) -> None:
    headers = {"authorization": f"Bearer {KEY_A}", "content-length": str(300_000_000)}
    status, reply = exchange(web_url, path, headers)
    assert (status, reply["code"]) == (413, "RESOURCE_EXHAUSTED")
    assert "4 MB" in str(reply["message"])  # answered without the body, which is never sent


def test_a_chunked_body_over_the_cap_is_413_once_the_cap_is_passed(web_url: str) -> None:
    headers = {"authorization": f"Bearer {KEY_A}", "transfer-encoding": "chunked"}
    piece = b" " * 65536  # 6 MB of JSON whitespace in all, never finished
    status, reply = exchange(web_url, CALL, headers, chunks=MAX_BODY_BYTES // len(piece) + 32, chunk=piece)
    assert (status, reply["code"]) == (413, "RESOURCE_EXHAUSTED")


def test_a_body_under_the_cap_is_still_served(web_url: str) -> None:
    body = json.dumps({"page_size": 1}).encode()
    headers = {"authorization": f"Bearer {KEY_A}", "content-length": str(len(body))}
    status, reply = exchange(web_url, CALL, headers, body)
    assert status == 200 and "tasks" in reply


@pytest.mark.parametrize("path", [CALL, "/api/batch"])
def test_deeply_nested_json_is_400_not_500(web_url: str, path: str) -> None:
    body = b'{"a":' * 200_000
    headers = {"authorization": f"Bearer {KEY_A}", "content-length": str(len(body))}
    status, reply = exchange(web_url, path, headers, body)
    assert (status, reply["code"]) == (400, "INVALID_ARGUMENT")


def test_a_nested_request_field_is_400_not_500(web_url: str) -> None:
    """Nesting that json reads but protobuf's parser refuses (its own depth limit): a Struct 400 levels deep."""
    nested = '{"a":' * 400 + '"leaf"' + "}" * 400
    body = ('{"task":{"id":"tsk_x","metadata":' + nested + '},"update_mask":"metadata"}').encode()
    headers = {"authorization": f"Bearer {KEY_A}", "content-length": str(len(body))}
    status, reply = exchange(web_url, "/api/call/TaskService/UpdateTask", headers, body)
    assert (status, reply["code"]) == (400, "INVALID_ARGUMENT")
