"""An HTTP server on loopback that answers headers at once, then trickles its body one byte at a time."""

from __future__ import annotations

import http.server
import threading
import time
from typing import Any


class _Reading:
    """How many bodies are being trickled right now (requests not yet given up or stopped)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0

    def add(self, n: int) -> None:
        with self.lock:
            self.count += n


class _Trickle(http.server.BaseHTTPRequestHandler):
    interval = 0.5
    stopped = threading.Event()
    reading = _Reading()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.reading.add(1)
        try:
            self.send_response(200)
            self.send_header("Content-Length", "1000000")
            self.end_headers()
            while not self.stopped.is_set():
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(self.interval)
        except OSError:
            pass  # the client gave up: what a probe with a deadline does
        finally:
            self.reading.add(-1)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class TrickleServer:
    """`with TrickleServer() as url:` a URL whose body never finishes while the block runs."""

    def __init__(self, interval: float = 0.5, port: int = 0) -> None:
        handler = type("Handler", (_Trickle,), {"interval": interval, "stopped": threading.Event(),
                                                "reading": _Reading()})
        self._handler = handler
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def reading(self) -> int:
        """Bodies being trickled now. A client that gives up is noticed at the next byte (within `interval`)."""
        return self._handler.reading.count

    def __enter__(self) -> str:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self.url

    def __exit__(self, *exc: object) -> None:
        self._handler.stopped.set()
        self._server.shutdown()
        self._server.server_close()
