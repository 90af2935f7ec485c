"""`taskmem mcp` tool-call latency over stdio, and the light Python client's installed size.

Latency: the MCP SDK's own client starts `taskmem mcp` over stdio, registers a task with a
10-item plan, posts progress on 6 items and 3 decisions, then calls task_query ("where was I?")
--calls times one after another, timing each call as the client sees it. Twice in one run:
- embedded: `taskmem mcp --database <temp file>` (its own in-process server);
- remote:   `taskmem mcp --address <a running taskmem serve>` (a separate server process).

Sizes (unless --no-sizes): two fresh virtualenvs, one with `pip install clients/python` (the light
client) and one with `pip install . clients/python` (the server with it: what installing the
client pulled in before the stubs moved to clients/python), each site-packages measured with du.
pip may use its wheel cache.

    .venv/bin/python bench/mcp_bench.py [--calls 200] [--no-sizes]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

from mcp import Client, StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.server_process import ServerProcess  # noqa: E402

PLAN = [f"Step {n}: do part {n} of the job" for n in range(1, 11)]


async def _ok(client: Client, tool: str, **arguments: object) -> str:
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    if result.is_error:
        raise RuntimeError(f"{tool}: {text}")
    return text


async def query_latencies(args: list[str], calls: int) -> list[float]:
    """Seconds per task_query call through `taskmem mcp <args>` over stdio."""
    parameters = StdioServerParameters(command=sys.executable, args=["-m", "taskmem", "mcp", *args])
    async with Client(parameters) as client:
        registered = await _ok(client, "task_register", name="bench task", plan=PLAN)
        task_id = registered.split()[2].rstrip(":")
        for n in range(1, 7):
            await _ok(client, "task_update", task_id=task_id, plan_item=str(n), item_status="completed",
                      message=f"step {n} done")
        await _ok(client, "task_update", task_id=task_id, plan_item="7", item_status="in_progress")
        for text in ("Use PostgreSQL for storage", "Deploy with a systemd unit", "Keep logs for 30 days"):
            await _ok(client, "task_note", task_id=task_id, kind="decision", text=text)
        for _ in range(10):  # warm-up
            await _ok(client, "task_query", task_id=task_id)
        latencies = []
        for _ in range(calls):
            started = time.perf_counter()
            await _ok(client, "task_query", task_id=task_id)
            latencies.append(time.perf_counter() - started)
        return latencies


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def _row(label: str, latencies: list[float]) -> str:
    ms = [value * 1000 for value in latencies]
    return (f"{label:<10} calls {len(ms):>4}  p50 {statistics.median(ms):7.2f} ms  p95 {_percentile(ms, 0.95):7.2f} ms"
            f"  max {max(ms):7.2f} ms")


def _site_packages_mb(environment: Path) -> float:
    site = next(environment.glob("lib/python*/site-packages"))
    out = subprocess.run(["du", "-sk", str(site)], check=True, capture_output=True, text=True).stdout
    return int(out.split()[0]) / 1024


def installed_size(directory: Path, source: Path, targets: list[str]) -> tuple[float, float, list[str]]:
    """(site-packages MB of a bare venv, after `pip install <targets>` in a copy of source, the
    distributions installed). The copy keeps the builds out of the source tree."""
    environment = directory / "venv"
    venv.create(environment, with_pip=True)
    bare = _site_packages_mb(environment)
    python = environment / "bin" / "python"
    copy = directory / "source"
    shutil.copytree(source, copy, ignore=shutil.ignore_patterns(
        "__pycache__", "*.egg-info", "build", ".venv", "node_modules", ".tools", "data", ".git"))
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    *(str(copy / target) for target in targets)], check=True, timeout=1800)
    listed = subprocess.run([python, "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
                            check=True, capture_output=True, text=True).stdout.split()
    return bare, _site_packages_mb(environment), listed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--no-sizes", action="store_true", help="skip the virtualenv installs")
    parser.add_argument("--before", metavar="REV",
                        help="also install `. clients/python` at this git revision (what installing the client "
                             "took before the stubs moved; clients/python then depended on the server)")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="taskmem-mcp-bench-") as temporary:
        workdir = Path(temporary)
        embedded = await query_latencies(["--database", str(workdir / "embedded.db")], options.calls)
        server = ServerProcess(workdir / "remote.db")
        address = server.start()
        try:
            remote = await query_latencies(["--address", address], options.calls)
        finally:
            server.stop()
        print('task_query ("where was I?") over stdio, one call at a time, as the MCP client sees it')
        print(_row("embedded", embedded))
        print(_row("remote", remote))
        print(f"remote/embedded p50 ratio {statistics.median(remote) / statistics.median(embedded):.2f}")

        if options.no_sizes:
            return
        light_dir, full_dir = workdir / "light", workdir / "full"
        light_dir.mkdir()
        full_dir.mkdir()
        bare, light, light_dists = installed_size(light_dir, ROOT / "clients" / "python", ["."])
        _, full, full_dists = installed_size(full_dir, ROOT, [".", "clients/python"])
        print()
        print("installed size (site-packages, a bare venv's pip and setuptools subtracted)")
        print(f"light client  pip install clients/python        {light - bare:7.1f} MB  {len(light_dists)} distributions")
        print(f"with server   pip install . clients/python      {full - bare:7.1f} MB  {len(full_dists)} distributions"
              "  (what the client pulled in before)")
        print(f"light/full ratio {(light - bare) / (full - bare):.2f}")
        if options.before:
            before_dir = workdir / "before"
            (before_dir / "tree").mkdir(parents=True)
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", options.before], check=True,
                                     capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(before_dir / "tree")], input=archive, check=True)
            _, before, before_dists = installed_size(before_dir, before_dir / "tree", [".", "clients/python"])
            print(f"client at {options.before[:10]}  pip install . clients/python  {before - bare:7.1f} MB"
                  f"  {len(before_dists)} distributions")
        print("light client distributions: " + ", ".join(sorted(d.split("==")[0] for d in light_dists)))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(main())
