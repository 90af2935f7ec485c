"""`taskmem backup` under writes: a paced writer at --rate writes/s, a backup taken in the middle, every id the
writer saw acknowledged before the backup started looked for in the copy.

1. starts `taskmem serve` (SQLite in a temporary folder, or --database postgresql://… with --pg-bin);
2. --writers concurrent writers post small messages, paced to --rate writes/s in all, for --seconds;
   each acknowledged id is kept with the moment its answer arrived;
3. --backup-at seconds in, runs `taskmem backup` (a separate process, as an operator would) and times it;
4. after the writers stop: `taskmem verify` on the copy, a server started on the copy (`taskmem restore` first),
   every message id listed from it, and the copy's event cursors (1..N with no hole, the next write N+1).

    .venv/bin/python bench/backup_run.py [--rate 1000] [--seconds 12] [--backup-at 4] [--writers 32]

Goal (issue 41): 0 ids acknowledged before the backup started missing from the copy; the cursors unbroken.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402
from tests.support.server_process import ServerOnDatabase  # noqa: E402


def _taskmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskmem", *args], capture_output=True, text=True, timeout=600)


async def _write(address: str, args: argparse.Namespace, copy: Path, database: str,
                 pg_bin: list[str]) -> dict[str, object]:
    acknowledged: list[tuple[float, str]] = []
    refused = [0]
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        task_id = (await tasks.CreateTask(pb.CreateTaskRequest(name="backup run"))).task.id
        started = time.monotonic()
        interval = args.writers / args.rate

        async def writer(offset: int) -> None:
            n = offset
            next_at = started + offset * interval / args.writers
            while time.monotonic() - started < args.seconds:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
                next_at += interval
                request = pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                content=f"write {n}", request_id=f"write-{n}")
                while True:
                    try:
                        posted = await tasks.PostMessage(request)
                        break
                    except grpc.aio.AioRpcError as error:
                        if error.code() != grpc.StatusCode.UNAVAILABLE:  # over capacity: retried, as clients do
                            raise
                        refused[0] += 1
                        await asyncio.sleep(0.25)
                acknowledged.append((time.monotonic(), posted.message.id))
                n += args.writers

        async def backup() -> tuple[float, float, subprocess.CompletedProcess[str]]:
            await asyncio.sleep(args.backup_at)
            begun = time.monotonic()
            done = await asyncio.to_thread(_taskmem, "backup", str(copy), "--database", database, *pg_bin)
            return begun, time.monotonic(), done

        *_, (begun, ended, done) = await asyncio.gather(*(writer(n) for n in range(args.writers)), backup())
    if done.returncode != 0:
        raise SystemExit(f"taskmem backup failed: {done.stderr}")
    during = [at for at, _ in acknowledged if begun <= at <= ended]
    return {"task_id": task_id, "acknowledged": acknowledged, "begun": begun, "ended": ended,
            "rate": len(acknowledged) / args.seconds, "rate during backup": len(during) / max(ended - begun, 1e-9),
            "backup output": done.stdout, "refused": refused[0]}


async def _read_copy(address: str, task_id: str) -> tuple[set[str], list[int], int]:
    async with grpc.aio.insecure_channel(address) as channel:
        tasks = TaskServiceStub(channel)
        found, token = set(), ""
        while True:
            page = await tasks.ListMessages(pb.ListMessagesRequest(task_id=task_id, page_size=500, page_token=token))
            found |= {m.id for m in page.messages}
            token = page.next_page_token
            if not token:
                break
        cursors, token = [], ""
        while True:
            events = await tasks.ListEvents(pb.ListEventsRequest(page_size=500, page_token=token))
            cursors += [event.cursor for event in events.events]
            token = events.next_page_token
            if not token:
                break
        await tasks.PostMessage(pb.PostMessageRequest(task_id=task_id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                                      content="on the copy"))
        after = await tasks.ListEvents(pb.ListEventsRequest(after_cursor=cursors[-1]))
        return found, cursors, after.events[0].cursor


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate", type=float, default=1000.0, help="writes per second asked of the writers")
    parser.add_argument("--seconds", type=float, default=12.0)
    parser.add_argument("--backup-at", type=float, default=4.0)
    parser.add_argument("--writers", type=int, default=32)
    parser.add_argument("--database", default="", help="postgresql://… (an empty database) instead of SQLite")
    parser.add_argument("--restore-into", default="", help="with --database: an empty database for the restore")
    parser.add_argument("--pg-bin", default="")
    args = parser.parse_args()
    pg_bin = ["--pg-bin", args.pg_bin] if args.pg_bin else []
    with tempfile.TemporaryDirectory() as folder:
        database = args.database or str(Path(folder) / "taskmem.db")
        copy = Path(folder) / "backup.taskmem"
        server = ServerOnDatabase(database)
        server.start(timeout=120)
        try:
            written = asyncio.run(_write(server.address, args, copy, database, pg_bin))
        finally:
            server.stop()
        verify = _taskmem("verify", str(copy), *pg_bin)
        restored_setting = args.restore_into or str(Path(folder) / "restored.db")
        restore = _taskmem("restore", str(copy), "--database", restored_setting, *pg_bin)
        if restore.returncode != 0:
            raise SystemExit(f"taskmem restore failed: {restore.stderr}")
        restored = ServerOnDatabase(restored_setting)
        restored.start(timeout=120)
        try:
            found, cursors, next_cursor = asyncio.run(_read_copy(restored.address, str(written["task_id"])))
        finally:
            restored.stop()
        size = copy.stat().st_size
    acknowledged: list[tuple[float, str]] = written["acknowledged"]  # type: ignore[assignment]
    begun, ended = float(written["begun"]), float(written["ended"])  # type: ignore[arg-type]
    before = {message_id for at, message_id in acknowledged if at < begun}
    during = {message_id for at, message_id in acknowledged if begun <= at <= ended}
    print(f"engine {'postgres' if args.database else 'sqlite'}: {args.writers} writers paced to {args.rate:.0f} "
          f"writes/s for {args.seconds} s; backup started at {args.backup_at} s")
    print(f"  writes acknowledged                         {len(acknowledged)} ({written['rate']:.0f}/s overall, "
          f"{written['rate during backup']:.0f}/s while the backup ran)")
    print(f"  calls refused as over capacity, retried     {written['refused']}")
    print(f"  backup took                                 {ended - begun:.2f} s (process start included), "
          f"{size / 1e6:.1f} MB")
    print(f"  acknowledged before the backup started      {len(before)}")
    print(f"  ... missing from the copy                   {len(before - found)}")
    print(f"  acknowledged while it ran, in the copy      {len(during & found)} of {len(during)}")
    print(f"  copy's event cursors                        1..{cursors[-1]} ({len(cursors)} events, "
          f"{'no hole' if cursors == list(range(1, len(cursors) + 1)) else 'HOLES'}); next write got {next_cursor}")
    print("  verify: " + "; ".join(verify.stdout.strip().splitlines()[1:]))
    unbroken = cursors == list(range(1, len(cursors) + 1)) and next_cursor == cursors[-1] + 1
    return 0 if not (before - found) and unbroken and verify.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
