"""A loopback port that is free now, for a server that must be named in an allow-list before it starts."""

from __future__ import annotations

import socket


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
