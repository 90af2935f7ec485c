"""The floor under an acknowledged write on this disk: fsync latency, and SQLite's durable commit.

An event's append→receipt latency includes the group commit that made it durable, and that
commit waits for the disk to say the WAL is on it. This measures that wait where the benchmarks
put their temporary databases (the system's temporary directory, or --dir): an append of 4 KiB
followed by fsync, and a one-row COMMIT of SQLite in WAL mode with synchronous=FULL (the
server's setting), each --count times, and prints p50, p90, p99 and max in ms. Nothing else
in this process runs meanwhile; other work on the machine shares the disk, as it does for the
server.

    .venv/bin/python bench/fsync_bench.py [--count 1000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import sqlean as sqlite3


def percentiles(samples: list[float]) -> str:
    ordered = sorted(samples)

    def at(fraction: float) -> float:
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]

    return (f"p50 {at(0.50):6.2f}  p90 {at(0.90):6.2f}  p99 {at(0.99):6.2f}  max {ordered[-1]:6.2f} ms"
            f"  ({sum(1 for s in ordered if s > 5.0) / len(ordered):.1%} over 5 ms)")


def fsync_latencies(directory: Path, count: int) -> list[float]:
    path = directory / "fsync-probe"
    block = os.urandom(4096)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            os.write(descriptor, block)
            os.fsync(descriptor)
            samples.append((time.perf_counter() - started) * 1e3)
        return samples
    finally:
        os.close(descriptor)


def commit_latencies(directory: Path, count: int) -> list[float]:
    connection = sqlite3.connect(str(directory / "commit-probe.db"), isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE probe (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
        body = os.urandom(1024)
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("INSERT INTO probe (body) VALUES (?)", (body,))
            connection.execute("COMMIT")
            samples.append((time.perf_counter() - started) * 1e3)
        return samples
    finally:
        connection.close()


def main(count: int, directory: str | None) -> None:
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        print(f"in {tmp}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"4 KiB append + fsync      {percentiles(fsync_latencies(Path(tmp), count))}")
        print(f"SQLite WAL COMMIT (FULL)  {percentiles(commit_latencies(Path(tmp), count))}")
        print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=1000, help="samples of each")
    parser.add_argument("--dir", help="directory on the disk to measure (default: the temporary directory)")
    arguments = parser.parse_args()
    main(arguments.count, arguments.dir)
