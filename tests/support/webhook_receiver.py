"""A loopback webhook receiver for tests: verifies each request's Standard Webhooks signature with the
reference library (standardwebhooks), records what it got, and can be stopped and started on the same port."""

from __future__ import annotations

import dataclasses
import http.server
import threading
from typing import Any

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


@dataclasses.dataclass
class Received:
    message_id: str
    body: dict[str, Any]
    raw: bytes
    headers: dict[str, str]  # lower-case names


class WebhookReceiver:
    """Answers `status` (200 unless told) to every POST; records verified requests in `received`,
    and counts every request, verified or not, in `requests`. With refuse_unverified, a request whose
    signature does not verify is answered 401 (as a strict receiver would), so the sender tries again."""

    def __init__(self, keep_alive: bool = False) -> None:
        # Keep-alive (HTTP/1.1) is faster, but a stopped receiver would still answer on open connections.
        self.keep_alive = keep_alive
        self.secret = ""
        self.status = 200
        self.refuse_unverified = False
        self.headers: dict[str, str] = {}
        self.received: list[Received] = []
        self.rejected: list[str] = []
        self.requests = 0
        self.port = 0
        self._server: http.server.ThreadingHTTPServer | None = None
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def start(self) -> None:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1" if receiver.keep_alive else "HTTP/1.0"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                verified = receiver.record({k.lower(): v for k, v in self.headers.items()}, raw)
                self.send_response(receiver.status if verified or not receiver.refuse_unverified else 401)
                for name, value in receiver.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Close the port: attempts are refused until start() again."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def record(self, headers: dict[str, str], raw: bytes) -> bool:
        """Whether the request verified."""
        with self._lock:
            self.requests += 1
            try:
                body = Webhook(self.secret).verify(raw, headers)
            except WebhookVerificationError as error:
                self.rejected.append(str(error))
                return False
            if self.status < 300:
                self.received.append(Received(headers["webhook-id"], body, raw, headers))
            return True

    def message_ids(self) -> list[str]:
        with self._lock:
            return [r.message_id for r in self.received]
