"""Fuzz every RPC with malformed and boundary requests; count the answers that must never happen.

Starts `taskmem serve` on a temporary database (file roots and an http host configured, so waits of
every kind are exercised; no model, embeddings off unless --embeddings builtin), seeds a few real
tasks, waits, actions and agents so requests can name things that exist, then sends --requests
requests spread over every method of the five services, --concurrency at a time:
- about 10 %: random bytes, or a valid request cut short (not a valid message);
- the rest: requests built from the method's descriptor with boundary values in every field —
  empty and over-long strings, ids that exist, ids of the wrong shape, NUL, paths that climb out,
  ints at their type's limits and -1, unknown enum numbers, NaN and ±inf in doubles and in Structs,
  deep Structs, Durations and Timestamps out of range, field masks naming anything, and repeated
  fields from 0 to 250,000 entries.
Streaming methods are read for at most one second.

It prints the count of INTERNAL and UNKNOWN answers (goal 0, with the first few examples), the
answers by status code, the server's RSS before and after and its CPU time over the run, the slowest
answer, and health checks sent every 100 ms alongside (an event loop blocked by a request shows up
there: the slowest, and how many took over 50 ms), beside the same checks against an idle server on
the same machine, whose figures are what the shared cores' load alone costs. Load averages are
printed at start and end.

Where RSS growth comes from — live Python objects or memory the C allocator keeps after it was
freed — two options tell apart. Both load a probe into the fuzzed server (a sitecustomize.py first
on its PYTHONPATH; the server's code is unchanged) that, on SIGUSR1, writes its figures to a file
the bench reads; the bench asks right after reading RSS at the start and at the end:
- --tracemalloc [FRAMES]: the server runs with PYTHONTRACEMALLOC=FRAMES (slower); prints the
  traced (live) Python heap before and after (as found, and after a gc.collect()), its peak, and
  the ten allocation sites whose live size grew most between the two (tracemalloc snapshots taken
  after the collection, compared by line, or by traceback with FRAMES > 1).
- --malloc-stats: glibc's mallinfo2() of the server (all arenas): bytes in use (as found and after a
  gc.collect()), bytes free but kept, heap (brk and arena) bytes, mmapped bytes; the number of arenas
  (malloc_info()); and at the end the RSS after a gc.collect() and then after malloc_trim(0), which
  hands back every free page glibc kept: the growth that trimming removes is allocator retention.

    .venv/bin/python bench/fuzz_rpcs.py [--requests 100000] [--concurrency 32] [--seed 12]
                                        [--tracemalloc [FRAMES]] [--malloc-stats]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import multiprocessing
import os
import random
import signal
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import descriptor, message, struct_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import checkpoint_service_pb2, memory_service_pb2, state_pb2, state_service_pb2, task_service_pb2  # noqa: E402
from taskmem.v1 import wait_pb2, wait_service_pb2  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402

SERVICES = [task_service_pb2, wait_service_pb2, state_service_pb2, memory_service_pb2, checkpoint_service_pb2]
FD = descriptor.FieldDescriptor
BAD_CODES = {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN}
INT_LIMITS = {FD.CPPTYPE_INT32: (-2**31, 2**31 - 1), FD.CPPTYPE_INT64: (-2**63, 2**63 - 1),
              FD.CPPTYPE_UINT32: (0, 2**32 - 1), FD.CPPTYPE_UINT64: (0, 2**64 - 1)}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# With --tracemalloc or --malloc-stats, the fuzzed server loads this as sitecustomize.py. On SIGUSR1 its
# main thread (the event loop's wakeup fd makes it run at once) writes its memory figures as JSON to
# $FUZZ_MEMORY_PROBE, and with tracemalloc on a snapshot of the live heap beside it.
MEMORY_PROBE = r"""
import ctypes, gc, json, os, re, signal, tracemalloc


class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def malloc_stats(xml_path):
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "mallinfo2"):  # not glibc, or older than 2.33
        return None
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    libc.fopen.restype, libc.fopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_char_p]
    libc.malloc_info.argtypes, libc.fclose.argtypes = [ctypes.c_int, ctypes.c_void_p], [ctypes.c_void_p]
    stream = libc.fopen(xml_path.encode(), b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    with open(xml_path) as file:
        arenas = len(re.findall('<heap nr="', file.read()))
    return {"arenas": arenas, **{name: getattr(info, name) for name, _ in MallInfo2._fields_}}


def rss():
    with open("/proc/self/status") as file:
        return next(int(line.split()[1]) * 1024 for line in file if line.startswith("VmRSS:"))


def report(signum, frame):
    out = os.environ["FUZZ_MEMORY_PROBE"]
    try:
        figures = measure(signum, out)
    except Exception as error:  # never into the server's own code: the bench prints it
        figures = {"error": repr(error)}
    with open(out + ".part", "w") as file:
        json.dump(figures, file)
    os.replace(out + ".part", out)


def measure(signum, out):
    figures = {"malloc": malloc_stats(out + ".malloc_info.xml")}
    if tracemalloc.is_tracing():
        figures["traced"], figures["traced_peak"] = tracemalloc.get_traced_memory()
    gc.collect()
    figures["malloc_after_gc"] = malloc_stats(out + ".malloc_info.xml")
    if tracemalloc.is_tracing():
        figures["traced_after_gc"] = tracemalloc.get_traced_memory()[0]
        tracemalloc.take_snapshot().dump(out + ".snapshot")
    if signum == signal.SIGUSR2 and figures["malloc"] is not None:  # the last look: what glibc can give back
        figures["rss_after_gc"] = rss()
        ctypes.CDLL(None).malloc_trim(0)
        figures["rss_after_trim"] = rss()
    return figures


if os.environ.get("FUZZ_MEMORY_PROBE"):
    signal.signal(signal.SIGUSR1, report)
    signal.signal(signal.SIGUSR2, report)
"""


def probe_memory(pid: int, out: Path, last: bool = False, timeout: float = 120.0) -> dict[str, Any]:
    """Ask the server's MEMORY_PROBE for its figures; with tracemalloc, "snapshot" is its live-heap snapshot.
    The last look (SIGUSR2) ends with malloc_trim(0) and the RSS after it."""
    out.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR2 if last else signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while not out.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the server's memory probe did not answer")
        time.sleep(0.05)
    figures: dict[str, Any] = json.loads(out.read_text())
    if "error" in figures:
        raise RuntimeError(f"the server's memory probe failed: {figures['error']}")
    if "traced" in figures:
        figures["snapshot"] = tracemalloc.Snapshot.load(str(out) + ".snapshot")
    return figures


def print_memory(before: dict[str, Any], after: dict[str, Any], frames: int, malloc_stats: bool) -> None:
    mib = 1024 * 1024
    if "traced" in after:
        print(f"tracemalloc, live Python heap: {before['traced'] / mib:.1f} MiB before, {after['traced'] / mib:.1f} MiB"
              f" after ({before['traced_after_gc'] / mib:.1f} and {after['traced_after_gc'] / mib:.1f} MiB after a"
              f" gc.collect()); peak {after['traced_peak'] / mib:.1f} MiB")
        print("  allocation sites whose live size grew most (after gc.collect(); a traceback reads caller -> callee):")
        for stat in after["snapshot"].compare_to(before["snapshot"], "traceback" if frames > 1 else "lineno")[:10]:
            where = " -> ".join(f"{frame.filename.rsplit('site-packages/', 1)[-1]}:{frame.lineno}"
                                for frame in stat.traceback)
            print(f"    {stat.size_diff / 1024:+10.1f} KiB ({stat.count_diff:+d} blocks) {where}")
    if not malloc_stats:
        return
    if after["malloc"] is None:
        print("glibc malloc: not available (no mallinfo2)")
        return
    for name, probe in (("before", before), ("after", after)):
        figures = probe["malloc"]
        print(f"glibc malloc {name:>6}: in use {figures['uordblks'] / mib:6.1f} MiB"
              f" ({probe['malloc_after_gc']['uordblks'] / mib:.1f} after gc.collect()), free but kept"
              f" {figures['fordblks'] / mib:6.1f} MiB, heaps {figures['arena'] / mib:6.1f} MiB in"
              f" {figures['arenas']} arenas, mmapped {figures['hblkhd'] / mib:5.1f} MiB in {figures['hblks']} chunks")
    print(f"server RSS after gc.collect() {after['rss_after_gc'] / mib:.1f} MiB, after malloc_trim(0)"
          f" {after['rss_after_trim'] / mib:.1f} MiB (what glibc kept free and could give back)")


class Values:
    """Boundary values per field kind; known ids are collected from answers as the run goes."""

    def __init__(self, rng: random.Random, root: Path) -> None:
        self.rng = rng
        self.root = root
        self.ids: collections.deque[str] = collections.deque(maxlen=500)
        self.budget = 0  # characters of long strings the request being built may still take

    def string(self, name: str) -> str:
        r = self.rng
        if self.ids and (name.endswith("id") or name.endswith("ids")) and r.random() < 0.6:
            return r.choice(self.ids)
        if r.random() < 0.02:
            size = min(self.budget, r.choice([2_001, 20_001, 100_001, 1_000_001, 3_000_000]))
            self.budget -= size
            return "a" * size
        return r.choice([
            "", " ", "x", "not-an-id", "tsk_" + "%024x" % r.getrandbits(96), "a" * 64, "a" * 65, "a" * 1001,
            "nul\x00byte", "ü" * 300, "../../etc/passwd",
            "/etc/passwd", str(self.root), "metadata.owner", "metadata.active_wait_ids", "http://127.0.0.1:9/",
            "https://example.com/", "file:///etc/passwd", "W/\"1\"", "d_123", "*", "%s", "\ud7ff" * 3,
            "-1", "9" * 30, "default", "next-page-token", "eyJ4IjoxfQ",
        ])

    def integer(self, cpp_type: int) -> int:
        low, high = INT_LIMITS[cpp_type]
        return max(low, min(high, self.rng.choice([0, 1, -1, 2, 50, 100, 500, 501, 1_000_000, low, high,
                                                    2**31, -2**31 - 1, 2**53 + 1])))

    def double(self) -> float:
        return self.rng.choice([0.0, -0.0, 1.5, -1.0, 1e308, -1e308, 5e-324, math.nan, math.inf, -math.inf])

    def json(self, depth: int = 0) -> Any:
        r = self.rng
        kind = r.random()
        if depth > 3 or kind < 0.4:
            return r.choice([None, True, "text", "", 0, -1, 2**60, self.double(), self.double()])
        if kind < 0.7:
            return {r.choice(["owner", "active_wait_ids", "last_wait_state", "score", "a.b", "", "ü"]):
                    self.json(depth + 1) for _ in range(r.randint(0, 4))}
        return [self.json(depth + 1) for _ in range(r.randint(0, 4))]


def _struct(values: Values, target: struct_pb2.Struct) -> None:
    data = values.json(1)
    if not isinstance(data, dict):
        data = {"value": data}
    if values.rng.random() < 0.05:  # deep nesting, near protobuf's recursion limit
        for _ in range(values.rng.choice([30, 90])):
            data = {"d": data}
    try:
        target.update(data)
    except (ValueError, TypeError):
        target.update({"value": str(data)})


def _value(values: Values, target: struct_pb2.Value) -> None:
    data = values.json()
    if isinstance(data, dict):
        _struct(values, target.struct_value)
    elif isinstance(data, list):
        target.list_value.extend([values.double()])
    elif isinstance(data, bool):
        target.bool_value = data
    elif isinstance(data, (int, float)):
        target.number_value = float(data)
    elif data is None:
        target.null_value = struct_pb2.NULL_VALUE
    else:
        target.string_value = data


def fill(values: Values, msg: message.Message, depth: int = 0) -> None:
    """Set a random subset of msg's fields to boundary values, recursively."""
    r = values.rng
    full_name = msg.DESCRIPTOR.full_name
    if full_name == "google.protobuf.Struct":
        _struct(values, msg)  # type: ignore[arg-type]
        return
    if full_name == "google.protobuf.Value":
        _value(values, msg)  # type: ignore[arg-type]
        return
    if full_name in ("google.protobuf.Duration", "google.protobuf.Timestamp"):
        seconds = [0, 1, -1, 5, 3600, 10**9, 253_402_300_800, -62_135_596_801, 2**63 - 1]
        msg.seconds = r.choice(seconds)  # type: ignore[attr-defined]
        msg.nanos = r.choice([0, 1, 999_999_999, 1_000_000_000, -1, 2**31 - 1])  # type: ignore[attr-defined]
        return
    if full_name == "google.protobuf.FieldMask":
        names = ["status", "name", "metadata", "metadata.owner", "metadata.active_wait_ids", "metadata.",
                 "metadata.a.b", "context", "id", "etag", "nope", "", "workspace", "error_summary"]
        msg.paths.extend(r.sample(names, r.randint(0, 4)))  # type: ignore[attr-defined]
        return
    for field in msg.DESCRIPTOR.fields:
        if r.random() < (0.35 if depth else 0.25):
            continue
        count = 1
        if field.is_repeated:
            count = r.choice([0, 1, 2, 3, 5, 21, 101, 129, 501, 1_001, 250_000 if r.random() < 0.1 else 2])
            if field.cpp_type == FD.CPPTYPE_MESSAGE:
                count = min(count, 501 if depth == 0 and r.random() < 0.1 else 26 if depth == 0 else 5)
        target = getattr(msg, field.name)
        if count > 1_001 and field.cpp_type != FD.CPPTYPE_MESSAGE:  # one small value, many times
            small = {FD.CPPTYPE_STRING: "x" if field.type == FD.TYPE_STRING else b"x", FD.CPPTYPE_BOOL: True,
                     FD.CPPTYPE_DOUBLE: 1.0, FD.CPPTYPE_FLOAT: 1.0}.get(field.cpp_type, 1)
            if field.cpp_type == FD.CPPTYPE_ENUM:
                small = r.choice([v.number for v in field.enum_type.values])
            target.extend([small] * count)
            continue
        for _ in range(count):
            value: Any
            if field.cpp_type == FD.CPPTYPE_MESSAGE:
                child = target.add() if field.is_repeated else target
                if depth < 4:
                    fill(values, child, depth + 1)
                else:
                    child.SetInParent()
                continue
            if field.cpp_type == FD.CPPTYPE_STRING:
                value = values.string(field.name) if field.type == FD.TYPE_STRING else r.randbytes(r.randint(0, 64))
            elif field.cpp_type == FD.CPPTYPE_ENUM:
                numbers = [v.number for v in field.enum_type.values]
                value = r.choice([*numbers, 0, 999, -1, 2**31 - 1])
            elif field.cpp_type == FD.CPPTYPE_BOOL:
                value = r.random() < 0.5
            elif field.cpp_type in (FD.CPPTYPE_DOUBLE, FD.CPPTYPE_FLOAT):
                value = values.double()
            else:
                value = values.integer(field.cpp_type)
            if field.is_repeated:
                target.append(value)
            else:
                setattr(msg, field.name, value)


class Method:
    def __init__(self, service: str, method: descriptor.MethodDescriptor, request_class: type[message.Message]) -> None:
        self.path = f"/{service}/{method.name}"
        self.name = method.name
        self.streaming = method.server_streaming
        self.request_class = request_class


def methods() -> list[Method]:
    found = []
    for module in SERVICES:
        for service in module.DESCRIPTOR.services_by_name.values():
            for method in service.methods:
                request_class = getattr(module, method.input_type.name)
                found.append(Method(service.full_name, method, request_class))
    return found


def request_bytes(values: Values, method: Method) -> bytes:
    r = values.rng
    roll = r.random()
    if roll < 0.05:
        return r.randbytes(r.randint(1, 200))
    while True:
        request = method.request_class()
        values.budget = 3_500_000
        fill(values, request)
        if request.ByteSize() < 64 * 1024 * 1024:
            break
    data = request.SerializeToString()
    if roll < 0.10 and len(data) > 1:
        return data[:r.randint(1, len(data) - 1)]
    return data


def collect_ids(answer: bytes, values: Values) -> None:
    """Remember ids an answer names (ids and task ids of created things), so later requests hit real rows."""
    text = answer.decode("latin-1")
    for prefix in ("tsk_", "wai_", "act_", "msg_", "mem_", "art_", "epi_", "ctx_"):
        at = text.find(prefix)
        if at >= 0 and len(text) >= at + 28:
            values.ids.append(text[at:at + 28])


async def seed(channel: grpc.aio.Channel, values: Values, workspace: Path) -> None:
    create_task = channel.unary_unary("/taskmem.v1.TaskService/CreateTask")
    create_wait = channel.unary_unary("/taskmem.v1.WaitService/CreateWait")
    put_memory = channel.unary_unary("/taskmem.v1.StateService/PutWorkingMemory")
    for n in range(5):
        answer = await create_task(task_service_pb2.CreateTaskRequest(
            name=f"seed {n}", workspace=str(workspace)).SerializeToString())
        task = task_service_pb2.CreateTaskResponse.FromString(answer).task
        values.ids.append(task.id)
        wait = wait_service_pb2.CreateWaitResponse.FromString(await create_wait(wait_service_pb2.CreateWaitRequest(
            task_id=task.id, target=wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=f"flag-{n}"))
        ).SerializeToString())).wait
        values.ids.append(wait.id)
        await put_memory(state_service_pb2.PutWorkingMemoryRequest(
            working_memory=state_pb2.WorkingMemory(agent_id=f"agent-{n}")).SerializeToString())
        values.ids.append(f"agent-{n}")


def heartbeat(address: str, stop: Any, beats: Any) -> None:
    """In a process of its own (the fuzzing loop is busy building requests): a health check every 100 ms.
    beats holds [worst ms, checks, checks over 50 ms]."""
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while not stop.is_set():
            started = time.perf_counter()
            stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=30)
            elapsed_ms = (time.perf_counter() - started) * 1000
            beats[0] = max(beats[0], elapsed_ms)
            beats[1] += 1
            beats[2] += elapsed_ms > 50
            time.sleep(0.1)


async def fuzz(address: str, idle_address: str, args: argparse.Namespace, root: Path,
               ) -> tuple[collections.Counter[str], list[str], tuple[float, str], list[list[float]], int]:
    values = Values(random.Random(args.seed), root)
    every = [m for m in methods() if not args.only or m.name in args.only.split(",")]
    codes: collections.Counter[str] = collections.Counter()
    bad: list[str] = []
    slowest: tuple[float, str] = (0.0, "")
    options = [("grpc.max_send_message_length", 64 * 1024 * 1024),
               ("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        await seed(channel, values, root / "default" / "workspace")  # file roots are per namespace: root/<namespace>
        spawn = multiprocessing.get_context("spawn")  # not fork: this process already runs gRPC threads
        # The same checks against an idle server beside it: what the shared machine's load alone costs.
        stop, fuzzed_beats, idle_beats = spawn.Event(), spawn.Array("d", 3), spawn.Array("d", 3)
        beats = [spawn.Process(target=heartbeat, args=(target, stop, counts), daemon=True)
                 for target, counts in ((address, fuzzed_beats), (idle_address, idle_beats))]
        for beat in beats:
            beat.start()
        left = args.requests

        async def one(method: Method, data: bytes) -> None:
            nonlocal slowest
            started = time.perf_counter()
            try:
                if method.streaming:
                    call = channel.unary_stream(method.path)(data, timeout=1.0)
                    async for answer in call:
                        collect_ids(answer, values)
                else:
                    answer = await channel.unary_unary(method.path)(data, timeout=30.0)
                    collect_ids(answer, values)
                code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as error:
                code = error.code()
                if code in BAD_CODES and len(bad) < 20:
                    bad.append(f"{method.name}: {code.name}: {error.details()[:300]}")
            elapsed = time.perf_counter() - started
            codes[code.name] += 1
            if code in BAD_CODES:
                codes["BAD"] += 1
            if not (method.streaming and code is grpc.StatusCode.DEADLINE_EXCEEDED) and elapsed > slowest[0]:
                slowest = (elapsed, f"{method.name} ({code.name}, {len(data):,} bytes)")

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                method = values.rng.choice(every)
                await one(method, request_bytes(values, method))

        await asyncio.gather(*(worker() for _ in range(args.concurrency)))
        stop.set()
        for beat in beats:
            beat.join()
    return codes, bad, slowest, [list(fuzzed_beats), list(idle_beats)], len(every)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=100_000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--embeddings", choices=("none", "builtin"), default="none")
    parser.add_argument("--only", default="", help="comma-separated method names to fuzz (default: every RPC)")
    parser.add_argument("--server-log", default="", help="write the fuzzed server's whole log to this file (with"
                        " PYTHONASYNCIODEBUG=1 and TASKMEM_LOG_LEVEL=WARNING it names callbacks that held the loop)")
    parser.add_argument("--tracemalloc", type=int, nargs="?", const=1, default=0, metavar="FRAMES",
                        help="trace the server's Python allocations (FRAMES deep, default 1) and print the live heap"
                             " and its most grown allocation sites, before and after")
    parser.add_argument("--malloc-stats", action="store_true",
                        help="print the server's glibc malloc figures (mallinfo2, arenas) before and after")
    args = parser.parse_args()
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as directory:
        base = Path(directory)
        (base / "root" / "default" / "workspace").mkdir(parents=True)
        (base / "data").mkdir()
        env = {"TASKMEM_WAIT_FILE_ROOTS": str(base / "root"), "TASKMEM_WAIT_HTTP_ALLOWED_HOSTS": "127.0.0.1:9",
               "TASKMEM_LOG_LEVEL": os.environ.get("TASKMEM_LOG_LEVEL", "ERROR")}  # unmapped errors are logged
        probed = bool(args.tracemalloc or args.malloc_stats)
        probe_env = {}
        if probed:
            (base / "probe").mkdir()
            (base / "probe" / "sitecustomize.py").write_text(MEMORY_PROBE)
            probe_env = {"FUZZ_MEMORY_PROBE": str(base / "probe" / "figures.json"),
                         "PYTHONPATH": os.pathsep.join(filter(None, [str(base / "probe"), os.environ.get("PYTHONPATH")]))}
            if args.tracemalloc:
                probe_env["PYTHONTRACEMALLOC"] = str(args.tracemalloc)
        server = ServerProcess(base / "data" / "taskmem.db", "--embedding-backend", args.embeddings,
                               env={**env, **probe_env})
        server.start()
        idle = ServerProcess(base / "data" / "idle.db", "--embedding-backend", "none", env=env)
        idle.start()
        assert server.process is not None
        pid = server.process.pid
        rss_before, cpu_before = rss_mib(pid), cpu_seconds(pid)
        memory_before = probe_memory(pid, base / "probe" / "figures.json") if probed else {}
        started = time.monotonic()
        try:
            codes, bad, slowest, beats, fuzzed = await fuzz(server.address, idle.address, args, base / "root")
            rss_after, cpu_used = rss_mib(pid), cpu_seconds(pid) - cpu_before
            memory_after = probe_memory(pid, base / "probe" / "figures.json", last=True) if probed else {}
        finally:
            server.stop()
            idle.stop()
        seconds = time.monotonic() - started
        log = "".join(server.output)
        if args.server_log:
            Path(args.server_log).write_text(log, encoding="utf-8")
        first = log.find(" failed (request id ")
    total = sum(n for code, n in codes.items() if code != "BAD")
    print(f"requests sent: {total:,} over {fuzzed} RPCs in {seconds:.0f} s "
          f"(concurrency {args.concurrency}, seed {args.seed}, embeddings {args.embeddings})")
    print("answers: " + ", ".join(f"{code} {n:,}" for code, n in codes.most_common() if code != "BAD"))
    print(f"INTERNAL/UNKNOWN answers: {codes['BAD']} (goal 0)")
    for line in bad:
        print(f"  {line}")
    if first >= 0:
        print("the server's log of the first one:")
        print(log[log.rfind("\n", 0, first) + 1:][:4000])
    print(f"server RSS: {rss_before:.1f} MiB before, {rss_after:.1f} MiB after; server CPU over the run {cpu_used:.1f} s")
    if probed:
        print_memory(memory_before, memory_after, args.tracemalloc, args.malloc_stats)
    print(f"slowest answer: {slowest[0] * 1000:.0f} ms, {slowest[1]}")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, (worst, checks, over) in zip(("fuzzed server", "idle server beside it"), beats):
        print(f"health checks every 100 ms, {name}: slowest {worst:.0f} ms, {over:.0f} of {checks:.0f} over 50 ms")


if __name__ == "__main__":
    asyncio.run(main())
