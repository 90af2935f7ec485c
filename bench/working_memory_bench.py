"""Working memory's cost in server RAM: the server's RSS as many agents put large working memories.

Issue 12 found each new agent_id kept ~0.5 MB in RAM for good (142 -> 458 MB after 600 agents). Working
memory is now a committed row per agent, so RSS should stay flat however many agents write. Starts
`taskmem serve` on a temporary database, then --agents agents each put a working memory of about
--bytes (scratchpad lines), --rounds times each, and prints the server's RSS before, after each round,
and the put rate; then the count refused past the per-namespace agent limit.

    .venv/bin/python bench/working_memory_bench.py [--agents 600] [--bytes 200000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

import grpc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from taskmem.v1 import state_pb2  # noqa: E402
from taskmem.v1 import state_service_pb2 as spb  # noqa: E402
from taskmem.v1.state_service_pb2_grpc import StateServiceStub  # noqa: E402
from tests.support.server_process import ServerProcess  # noqa: E402


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def put_all(stub: StateServiceStub, agents: int, size: int, round_number: int) -> tuple[float, int]:
    line = "x" * 999
    lines = max(1, size // 1000)
    in_flight = asyncio.Semaphore(8)
    refused = 0

    async def put(n: int) -> None:
        nonlocal refused
        memory = state_pb2.WorkingMemory(agent_id=f"agent-{n}", current_plan=f"round {round_number}",
                                         scratchpad=[line] * lines)
        async with in_flight:
            try:
                await stub.PutWorkingMemory(spb.PutWorkingMemoryRequest(working_memory=memory))
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                refused += 1

    started = time.perf_counter()
    await asyncio.gather(*(put(n) for n in range(agents)))
    return time.perf_counter() - started, refused


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=600)
    parser.add_argument("--bytes", type=int, default=200_000, help="about this many bytes per working memory")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as directory:
        server = ServerProcess(Path(directory) / "taskmem.db", "--log-level", "warning")
        server.start()
        assert server.process is not None
        pid = server.process.pid
        try:
            options = [("grpc.max_send_message_length", 8 * 1024 * 1024)]
            async with grpc.aio.insecure_channel(server.address, options=options) as channel:
                stub = StateServiceStub(channel)
                await stub.GetWorkingMemory(spb.GetWorkingMemoryRequest(agent_id="warm-up"))
                print(f"server RSS before: {rss_mib(pid):.1f} MiB")
                for round_number in range(1, args.rounds + 1):
                    seconds, refused = await put_all(stub, args.agents, args.bytes, round_number)
                    print(f"round {round_number}: {args.agents} agents x ~{args.bytes:,} bytes put in {seconds:.1f} s"
                          f" ({args.agents / seconds:.0f}/s, {refused} refused); server RSS {rss_mib(pid):.1f} MiB")
                _, refused = await put_all(stub, 1_100, 1_000, args.rounds + 1)
                print(f"1,100 agents of 1 KB after that: {refused} refused (RESOURCE_EXHAUSTED past"
                      f" working_memory_max_agents); server RSS {rss_mib(pid):.1f} MiB")
        finally:
            server.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
