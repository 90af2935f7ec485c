"""Polled waits on three replicas of one PostgreSQL database (whatever --engine says): each look at an http
target is made by the one replica holding the wait's claim, a killed replica's waits are taken over within
the lease time, and each wait ends once."""

from __future__ import annotations

import asyncio
import http.server
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.store.postgres.leases import LEASE_SECONDS
from taskmem.v1 import event_pb2, wait_pb2
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.postgres import database_url
from tests.support.server_process import ServerOnDatabase

INTERVAL = 0.3  # seconds between looks at one target
WAITS = 12
END_TYPES = {event_pb2.EVENT_TYPE_WAIT_RESOLVED, event_pb2.EVENT_TYPE_WAIT_TIMED_OUT,
             event_pb2.EVENT_TYPE_WAIT_CANCELLED, event_pb2.EVENT_TYPE_WAIT_FAILED}


class _CountingSite(http.server.BaseHTTPRequestHandler):
    """Answers "pending" until a path is marked done; remembers when each path was asked for."""

    looks: dict[str, list[float]] = {}
    done: set[str] = set()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.looks.setdefault(self.path, []).append(time.monotonic())
        body = b"done" if self.path in self.done else b"pending"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _CountingSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    _CountingSite.looks.clear()
    _CountingSite.done.clear()


@pytest.fixture
def replicas(tmp_path: Path, site: str) -> Iterator[list[ServerOnDatabase]]:
    url = database_url(str(tmp_path / "claims"))
    env = {"TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1",
           "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": site.removeprefix("http://")}
    started = [ServerOnDatabase(url, env=env) for _ in range(3)]
    for replica in started:
        replica.start()
    yield started
    for replica in started:
        print(f"--- replica {replica.address}:\n" + "".join(replica.output[-30:]))  # shown when the test fails
        if replica.process is not None and replica.process.poll() is None:
            replica.stop()


def closest_looks(since: float = 0.0) -> float:
    """The shortest time between two consecutive looks at one target (after `since`)."""
    gaps = [b - a for times in _CountingSite.looks.values() for a, b in zip(times, times[1:]) if a >= since]
    return min(gaps)


async def test_each_polled_wait_is_looked_at_by_one_replica_and_a_killed_replicas_waits_are_taken_over(
        replicas: list[ServerOnDatabase], site: str) -> None:
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    try:
        waits = [WaitServiceStub(channel) for channel in channels]
        interval = duration_pb2.Duration(nanos=int(INTERVAL * 1e9))
        created: dict[str, str] = {}  # wait id -> path
        for n in range(WAITS):
            path = f"/build/{n}"
            target = wait_pb2.WaitTarget(http=wait_pb2.HttpTarget(url=site + path, body_contains="done"))
            wait = (await waits[n % 3].CreateWait(pb.CreateWaitRequest(
                target=target, poll_interval=interval, timeout=duration_pb2.Duration(seconds=300)))).wait
            created[wait.id] = path

        watched = 4.0
        started = time.monotonic()
        await asyncio.sleep(watched)
        # One replica per round: looks at a target come an interval apart, never two in the same round.
        assert set(_CountingSite.looks) == set(created.values())
        assert closest_looks() >= INTERVAL / 2, _CountingSite.looks
        rounds = watched / INTERVAL
        for path, times in _CountingSite.looks.items():
            # Counted over the watched window only: on a loaded machine the waits' creation takes a while too.
            seen = [t for t in times if started <= t <= started + watched]
            assert len(seen) <= rounds + 2, (path, len(seen))  # three replicas looking would make ~3 x rounds

        killed_at = time.monotonic()
        replicas[1].stop(signal.SIGKILL)
        # The killed replica's waits are looked at again by another once its lease lapses; how soon depends on
        # the machine's load (the test prints it), so the deadline is a hang guard only.
        deadline = killed_at + LEASE_SECONDS + 120
        while not all(times[-1] > killed_at + LEASE_SECONDS / 2 for times in _CountingSite.looks.values()):
            assert time.monotonic() < deadline, {p: t[-1] - killed_at for p, t in _CountingSite.looks.items()}
            await asyncio.sleep(0.2)
        taken_over = time.monotonic() - killed_at
        await asyncio.sleep(1.0)
        assert closest_looks() >= INTERVAL / 2

        _CountingSite.done.update(created.values())
        live = waits[0]
        for wait_id in created:
            guard = time.monotonic() + 120  # a hang guard: resolution follows the next look, however late
            while time.monotonic() < guard:
                wait = (await live.GetWait(pb.GetWaitRequest(wait_id=wait_id))).wait
                if wait.status != wait_pb2.WAIT_STATUS_WAITING:
                    break
                await asyncio.sleep(0.1)
            assert wait.status == wait_pb2.WAIT_STATUS_RESOLVED, wait
        tasks = TaskServiceStub(channels[0])
        events = (await tasks.ListEvents(tpb.ListEventsRequest(page_size=500))).events
        ended = Counter(e.payload["id"] for e in events if e.type in END_TYPES)
        assert ended == Counter(set(created)), ended
        print(f"killed replica's waits looked at again {taken_over:.1f} s after the kill")
    finally:
        for channel in channels:
            await channel.close()
