"""A loopback OpenAI-compatible chat-completions server that tests script: each request gets the
answer of the first rule whose marker appears in the prompt (or the default), and is recorded."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

Answer = Callable[[str, str], str]  # (system, user) -> assistant text


class ScriptedLLM:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.answer: Answer = lambda system, user: "[]"
        self.hold = threading.Event()  # while set, requests stall (a model that never answers)
        self.release = threading.Event()
        self.base_url = ""

    @property
    def user_prompts(self) -> list[str]:
        return [r["messages"][1]["content"] for r in self.requests]


@contextmanager
def scripted_llm() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            llm.requests.append(body)
            if llm.hold.is_set():
                llm.release.wait(60)
            system, user = body["messages"][0]["content"], body["messages"][1]["content"]
            reply = json.dumps({"choices": [{"message": {"role": "assistant", "content": llm.answer(system, user)}}]})
            data = reply.encode()
            try:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    llm.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield llm
    finally:
        llm.release.set()
        server.shutdown()
