"""A loopback OpenAI-compatible /v1/embeddings server for tests: deterministic bag-of-words vectors
whose dimension is the number at the end of the model name ("words-16" → 16), so two models can be
told apart without any real model or network."""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def embed(text: str, dimension: int) -> list[float]:
    """Each word adds 1 to a bucket chosen by its hash; a constant keeps every vector non-zero."""
    vector = [0.0] * dimension
    vector[0] = 0.1
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dimension] += 1.0
    return vector


class FakeEmbeddings:
    def __init__(self) -> None:
        self.base_url = ""
        self.requests: list[dict[str, Any]] = []


@contextmanager
def fake_embeddings() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            fake.requests.append(body)
            dimension = int(re.findall(r"\d+$", body["model"])[0])
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = json.dumps({"object": "list", "model": body["model"], "data": [
                {"object": "embedding", "index": i, "embedding": embed(t, dimension)} for i, t in enumerate(texts)]})
            payload = data.encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
