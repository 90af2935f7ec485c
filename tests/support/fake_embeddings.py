"""A loopback OpenAI-compatible /v1/embeddings server for tests: deterministic bag-of-words vectors
whose dimension is the number at the end of the model name ("words-16" → 16), so two models can be
told apart without any real model or network. Each answer's `usage` counts the words sent as its
prompt_tokens."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.json_http import json_server


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
        self._open = threading.Event()
        self._open.set()

    def hold(self) -> None:
        """Keep every request waiting (for at most 60 s) until release(): a model that has not answered yet."""
        self._open.clear()

    def release(self) -> None:
        self._open.set()


@contextmanager
def fake_embeddings() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings()

    def reply(body: dict[str, Any]) -> dict[str, Any]:
        fake.requests.append(body)
        fake._open.wait(60)
        dimension = int(re.findall(r"\d+$", body["model"])[0])
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        words = sum(len(re.findall(r"\w+", text)) for text in texts)
        return {"object": "list", "model": body["model"], "data": [
            {"object": "embedding", "index": i, "embedding": embed(t, dimension)} for i, t in enumerate(texts)],
            "usage": {"prompt_tokens": words, "total_tokens": words}}

    with json_server(reply) as base_url:
        fake.base_url = f"{base_url}/v1"
        yield fake
