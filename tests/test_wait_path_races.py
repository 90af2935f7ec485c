"""File waits created while their path is being swapped, by rename, between a file and a symbolic link: every
answer is a clear one (the wait, or the path refused), never INTERNAL."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import Counter
from pathlib import Path

import grpc
import pytest

from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_pb2
from taskmem.v1 import wait_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.server_process import ServerProcess

SWAP_SECONDS = 4.0
CALLERS = 4
CLEAR = {grpc.StatusCode.OK, grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT}


def _swap_until(path: Path, link_to: Path, stop: threading.Event) -> int:
    """Swap path between a regular file and a symbolic link, each time by an atomic rename; returns the swaps."""
    swaps = 0
    while not stop.is_set():
        temporary = path.with_name(f".swap-{swaps}")
        if swaps % 2:
            temporary.write_text("plain file")
        else:
            os.symlink(link_to, temporary)
        os.rename(temporary, path)
        swaps += 1
    return swaps


async def _create_waits(waits: WaitServiceStub, task_id: str, deadline: float) -> Counter[grpc.StatusCode]:
    codes: Counter[grpc.StatusCode] = Counter()
    while time.monotonic() < deadline:
        try:
            await waits.CreateWait(pb.CreateWaitRequest(
                task_id=task_id, target=wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="flag", contains="DONE"))))
            codes[grpc.StatusCode.OK] += 1
        except grpc.aio.AioRpcError as error:
            codes[error.code()] += 1
            assert error.code() in CLEAR, f"{error.code()}: {error.details()}"
    return codes


async def test_a_file_wait_created_while_its_path_is_swapped_for_a_link_is_never_internal(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"  # not the database's folder, which file waits never read
    workspace.mkdir()
    (workspace / "real.txt").write_text("the link's target")
    (workspace / "flag").write_text("plain file")
    server = ServerProcess(tmp_path / "taskmem.db", env={"TASKMEM_WAIT_FILE_ROOTS": f"default={workspace}"})
    server.start(timeout=120)
    stop = threading.Event()
    swapper = threading.Thread(target=_swap_until, args=(workspace / "flag", workspace / "real.txt", stop))
    try:
        async with grpc.aio.insecure_channel(server.address) as channel:
            task = (await TaskServiceStub(channel).CreateTask(tpb.CreateTaskRequest(
                name="race", workspace=str(workspace)))).task
            swapper.start()
            deadline = time.monotonic() + SWAP_SECONDS
            results = await asyncio.gather(*(_create_waits(WaitServiceStub(channel), task.id, deadline)
                                             for _ in range(CALLERS)))
        codes = sum(results, Counter())
        assert codes[grpc.StatusCode.OK] > 0, codes  # the race did not simply refuse everything
        assert set(codes) <= CLEAR, codes
    finally:
        stop.set()
        if swapper.is_alive():
            swapper.join()
        server.stop()
