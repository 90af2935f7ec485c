"""The server's own throughput and cost, measured with a compiled load generator (ghz) against a bare echo.

A Python client takes about half of each call's CPU on these 2 cores (docs/write-path.md), so measured
through it a ratio to echo says as much about the client as about the server. Here every call comes
from ghz (Go; `make .tools/bin/.installed` installs the pinned version), with binary payloads (`-B`, so
ghz does not spend its CPU on JSON), the same concurrency and connections for every target:

- echo: a bare grpc.aio server whose one method returns the request's bytes (bench/proto/echo.proto),
  sent RecordAction's request bytes;
- RecordAction on the server `make run` starts (`taskmem serve --listen … --database FILE`, every other
  setting at its default), a 900-character summary, no request_id;
- GetTask of a task with a 50-item plan on that server.

Rounds interleave the targets (echo, RecordAction, GetTask, each round in a rotated order), and each
ratio is taken against echo's figure of its own round; medians over rounds are printed beside the
range. Server CPU per call is the server process's utime+stime (/proc/PID/stat) over the round divided
by the calls answered. Then, at 50 % of each target's median measured maximum rate (ghz --rps, open
loop), the latency p50/p99 — again interleaved. The load average is printed beside every figure.

With `--compare CHECKOUT` a second taskmem server runs from another checkout's server/ (e.g. `git
worktree add /tmp/before main`), measured in the same rounds, so before and after share the load.

With `--ceiling` a third server runs in the same rounds: a bare grpc.aio server, registered like echo, whose
TaskService.GetTask and RecordAction return the taskmem server's own replies to the bench's calls, serialized
once at start-up — no guard, no lookup, no write. It is the most any handler of these methods could reach in
grpc.aio on this machine: a ratio to echo the ceiling does not reach, the server cannot either.

    .venv/bin/python bench/ghz_bench.py [--seconds 10] [--rounds 3] [--concurrency 64] [--connections 4]
        [--compare CHECKOUT] [--ceiling] [--server-env TASKMEM_NAME=VALUE ...] [--only echo,record,get]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from task_service_bench import ECHO_SERVER, cpu_seconds, start_listening, start_taskmem  # noqa: E402
from taskmem.v1 import task_pb2  # noqa: E402
from taskmem.v1 import task_service_pb2 as pb  # noqa: E402
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub  # noqa: E402

GHZ = ROOT / ".tools/bin/ghz"
# The ceiling (--ceiling): TaskService's two methods answered with fixed bytes (argv: GetTask's reply file,
# RecordAction's), registered as echo registers its method, with no serializers (bytes in, bytes out).
CEILING_SERVER = """
import asyncio, sys, grpc
replies = {"GetTask": open(sys.argv[1], "rb").read(), "RecordAction": open(sys.argv[2], "rb").read()}
def canned(reply):
    async def answer(request, context):
        return reply
    return grpc.unary_unary_rpc_method_handler(answer)
async def main():
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "taskmem.v1.TaskService", {name: canned(reply) for name, reply in replies.items()}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"ceiling on 127.0.0.1:{port}", flush=True)
    await server.wait_for_termination()
asyncio.run(main())
"""
SUMMARY = ("bench action: " + "x" * 900)[:900]


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


@dataclass
class Target:
    """One method on one server, and what each round measured of it."""
    name: str
    pid: int
    address: str
    proto: Path
    call: str
    payload: Path
    rps: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # server CPU µs per answered call
    p50: list[float] = field(default_factory=list)  # ms, at full load
    p99: list[float] = field(default_factory=list)
    ratio: list[float] = field(default_factory=list)
    errors: int = 0
    half_p50: list[float] = field(default_factory=list)  # ms, at 50 % of the measured maximum rate
    half_p99: list[float] = field(default_factory=list)
    half_rate: list[float] = field(default_factory=list)  # the rate asked for (req/s)
    half_achieved: list[float] = field(default_factory=list)  # the rate answered


def ghz(target: Target, arguments: argparse.Namespace, seconds: float, rps: int | None = None) -> dict[str, Any]:
    """One ghz run against target; its JSON report, plus the server's CPU µs per answered call."""
    command = [str(GHZ), "--insecure", "--proto", str(target.proto), "-i",
               f"{ROOT / 'proto'},{ROOT / 'bench/proto'}", "--call", target.call, "-B", str(target.payload),
               "-c", str(arguments.concurrency), "--connections", str(arguments.connections),
               "-z", f"{seconds}s", "-O", "json", "--timeout", "20s", target.address]
    if rps is not None:
        command[1:1] = ["--rps", str(rps)]
    before = cpu_seconds(target.pid)
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    used = cpu_seconds(target.pid) - before
    if not completed.stdout.strip():
        raise RuntimeError(f"ghz failed on {target.name}: {completed.stderr.strip()}")
    report = json.loads(completed.stdout)
    codes = report.get("statusCodeDistribution") or {}
    answered = codes.get("OK", 0)
    report["ok"] = answered
    # ghz ends a -z run by closing its connections under the calls still in flight: those fail on its side
    # ("use of closed network connection", "the client connection is closing"), not the server's.
    errors = report.get("errorDistribution") or {}
    cut = sum(count for error, count in errors.items() if "closed network connection" in error
              or "client connection is closing" in error)
    report["failed"] = sum(count for code, count in codes.items() if code != "OK") - cut
    report["errors_seen"] = {error[:120]: count for error, count in errors.items()
                             if "closed network connection" not in error and "client connection is closing" not in error}
    report["server_cpu_us"] = used / answered * 1e6 if answered else float("nan")
    report["ok_rps"] = answered / (report["total"] / 1e9)
    return report


def percentile(report: dict[str, Any], wanted: int) -> float:
    """Latency at the wanted percentage in ms (ghz's latencyDistribution, nanoseconds)."""
    for row in report.get("latencyDistribution") or []:
        if row["percentage"] == wanted:
            return row["latency"] / 1e6
    return float("nan")


def prepare(address: str, workdir: Path, tag: str) -> tuple[Path, Path]:
    """A task with a 50-item plan on the server at address; the RecordAction and GetTask payload files, and
    beside them (…-reply.bin) the server's reply to each, for the ceiling."""
    plan = [task_pb2.PlanItemSpec(id=f"step-{i}", title=f"Step {i}: do the thing number {i}",
                                  depends_on=[f"step-{i - 1}"] if i else []) for i in range(50)]
    with grpc.insecure_channel(address) as channel:
        stub = TaskServiceStub(channel)
        task_id = stub.CreateTask(pb.CreateTaskRequest(name="bench", plan=plan)).task.id
        record_request = pb.RecordActionRequest(task_id=task_id, summary=SUMMARY,
                                                status=task_pb2.ACTION_STATUS_SUCCEEDED)
        get_request = pb.GetTaskRequest(task_id=task_id)
        (workdir / f"record-{tag}-reply.bin").write_bytes(stub.RecordAction(record_request).SerializeToString())
        (workdir / f"get-{tag}-reply.bin").write_bytes(stub.GetTask(get_request).SerializeToString())
    record = workdir / f"record-{tag}.bin"
    record.write_bytes(record_request.SerializeToString())
    get = workdir / f"get-{tag}.bin"
    get.write_bytes(get_request.SerializeToString())
    return record, get


def start_ceiling(get: Path, record: Path) -> tuple[subprocess.Popen[str], str]:
    return start_listening([sys.executable, "-c", CEILING_SERVER, str(get.with_name(get.stem + "-reply.bin")),
                            str(record.with_name(record.stem + "-reply.bin"))])


def profile(targets: list[Target], arguments: argparse.Namespace) -> None:
    """One more run of each taskmem target at the maximum rate under py-spy (a bench tool, not a dependency:
    `pip install py-spy`), its samples written to DIR/<method>.txt as collapsed stacks (the GIL holder's
    only, so a thread waiting on I/O or the lock is not counted as work)."""
    directory = Path(arguments.py_spy)
    directory.mkdir(parents=True, exist_ok=True)
    for target in targets:
        output = directory / (target.name.split()[0] + ("-compare" if "[compare]" in target.name else "") + ".txt")
        spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(target.pid), "--format", "raw", "--rate", "250",
                                "--gil", "--threads", "--duration", str(max(1, int(arguments.seconds) - 1)),
                                "--nonblocking", "--output", str(output)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ghz(target, arguments, arguments.seconds)
        spy.wait(60)
        print(f"py-spy profile of {target.name}: {output}; {load()}", flush=True)


def line(target: Target) -> str:
    ratio = (f"{statistics.median(target.ratio):.2f}x echo ({min(target.ratio):.2f}–{max(target.ratio):.2f})"
             if target.ratio else "")
    return (f"{target.name:<28} {statistics.median(target.rps):6.0f} req/s ({min(target.rps):.0f}–"
            f"{max(target.rps):.0f})  {ratio:<26} p50 {statistics.median(target.p50):6.1f} ms  p99 "
            f"{statistics.median(target.p99):6.1f} ms  server CPU {statistics.median(target.cpu):4.0f} µs/call "
            f"({min(target.cpu):.0f}–{max(target.cpu):.0f})  failed {target.errors}")


def main(arguments: argparse.Namespace) -> None:
    if not GHZ.exists():
        sys.exit(f"{GHZ} is missing: run `make {ROOT}/.tools/bin/.installed`")
    checkouts = [("", ROOT)] + ([(" [compare]", Path(arguments.compare).resolve())] if arguments.compare else [])
    processes: list[subprocess.Popen[str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        try:
            echo, echo_address = start_listening([sys.executable, "-c", ECHO_SERVER])
            processes.append(echo)
            targets: list[Target] = []
            task_proto = ROOT / "proto/taskmem/v1/task_service.proto"
            for index, (tag, checkout) in enumerate(checkouts):
                process, address = start_taskmem(workdir / f"taskmem{index}.db", checkout, arguments.server_env)
                processes.append(process)
                record, get = prepare(address, workdir, str(index))
                targets.append(Target(f"RecordAction{tag}", process.pid, address, task_proto,
                                      "taskmem.v1.TaskService.RecordAction", record))
                targets.append(Target(f"GetTask (50 items){tag}", process.pid, address, task_proto,
                                      "taskmem.v1.TaskService.GetTask", get))
            if arguments.ceiling:
                ceiling, ceiling_address = start_ceiling(targets[1].payload, targets[0].payload)
                processes.append(ceiling)
                targets.append(Target("RecordAction [ceiling]", ceiling.pid, ceiling_address, task_proto,
                                      "taskmem.v1.TaskService.RecordAction", targets[0].payload))
                targets.append(Target("GetTask (50 items) [ceiling]", ceiling.pid, ceiling_address, task_proto,
                                      "taskmem.v1.TaskService.GetTask", targets[1].payload))
            echo_target = Target("echo (RecordAction's bytes)", echo.pid, echo_address,
                                 ROOT / "bench/proto/echo.proto", "bench.Echo.Echo", targets[0].payload)
            wanted = set(arguments.only.split(","))
            everything = [echo_target] + [t for t in targets if ("record" in wanted and t.name.startswith("Record"))
                                          or ("get" in wanted and t.name.startswith("GetTask"))]
            print(f"ghz {arguments.concurrency} in flight over {arguments.connections} connections, binary payloads, "
                  f"{arguments.rounds} rounds of {arguments.seconds:g} s; {load()}", flush=True)
            for target in everything:  # warm-up: caches, connections, the allocator
                ghz(target, arguments, 2)
            for round_number in range(arguments.rounds):
                shift = round_number % len(everything)
                measured_echo = None
                for target in everything[shift:] + everything[:shift]:
                    report = ghz(target, arguments, arguments.seconds)
                    target.rps.append(report["ok_rps"])
                    target.cpu.append(report["server_cpu_us"])
                    target.p50.append(percentile(report, 50))
                    target.p99.append(percentile(report, 99))
                    target.errors += report["failed"]
                    if target is echo_target:
                        measured_echo = report["ok_rps"]
                    print(f"  round {round_number + 1} {target.name:<28} {report['ok_rps']:6.0f} req/s  p99 "
                          f"{target.p99[-1]:6.1f} ms  server CPU {report['server_cpu_us']:4.0f} µs/call  failed "
                          f"{report['failed']} {dict(report['errors_seen']) or ''}  {load()}", flush=True)
                for target in everything[1:]:
                    target.ratio.append(target.rps[-1] / measured_echo)
            print(f"at the maximum rate (medians over rounds); {load()}")
            for target in everything:
                print(line(target))
            print("at 50 % of each one's median maximum rate (ghz --rps, open loop; goal p99 <= 10 ms):")
            for round_number in range(arguments.half_rounds):
                for target in everything:
                    rate = int(statistics.median(target.rps) / 2)
                    report = ghz(target, arguments, arguments.seconds, rate)
                    target.half_p50.append(percentile(report, 50))
                    target.half_p99.append(percentile(report, 99))
                    target.half_rate.append(rate)
                    target.half_achieved.append(report["ok_rps"])
                    target.errors += report["failed"]
                    print(f"  round {round_number + 1} {target.name:<28} asked {rate} req/s, answered "
                          f"{report['ok_rps']:.0f}/s  p50 {target.half_p50[-1]:.1f} ms  p99 {target.half_p99[-1]:.1f} ms"
                          f"  server CPU {report['server_cpu_us']:.0f} µs/call  failed {report['failed']}  {load()}",
                          flush=True)
            for target in everything if arguments.half_rounds else []:
                print(f"{target.name:<28} at {statistics.median(target.half_rate):.0f} req/s: p50 "
                      f"{statistics.median(target.half_p50):.1f} ms, p99 {statistics.median(target.half_p99):.1f} ms "
                      f"({min(target.half_p99):.1f}–{max(target.half_p99):.1f})")
            if arguments.py_spy:
                profile(everything[1:], arguments)
            print(load())
        finally:
            for process in processes:
                process.terminate()
                process.wait(10)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measurement")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--half-rounds", type=int, default=2, help="rounds at 50 %% of the maximum rate")
    parser.add_argument("--concurrency", type=int, default=64, help="calls in flight (ghz -c)")
    parser.add_argument("--connections", type=int, default=4, help="gRPC connections (ghz --connections)")
    parser.add_argument("--compare", help="another checkout whose server is measured in the same rounds")
    parser.add_argument("--ceiling", action="store_true", help="measure a bare server answering both methods "
                        "with canned replies in the same rounds")
    parser.add_argument("--server-env", action="append", default=[], metavar="TASKMEM_NAME=VALUE",
                        help="a setting other than the default for every taskmem server")
    parser.add_argument("--py-spy", metavar="DIR", help="after the measured rounds, profile each taskmem method "
                        "with py-spy into DIR")
    parser.add_argument("--only", default="record,get", help="which taskmem methods: record, get or both")
    main(parser.parse_args())
