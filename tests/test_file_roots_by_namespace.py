"""File waits read only their own namespace's folders (issue 27, point 1), end to end.

wait_file_roots here: one unqualified root (each namespace reads <root>/<namespace>/) and one root bound to
namespace alpha by name (alpha=<folder>). A key of alpha can neither create nor run a file wait reading beta's
folder, with or without `contains`, whatever the task's workspace says.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2

from taskmem.v1 import wait_pb2
from taskmem.v1 import task_service_pb2 as tpb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.rpc_errors import assert_rpc_error
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

POLL = duration_pb2.Duration(nanos=100_000_000)
KEYS = "alpha-key:alpha;beta-key:beta"


def bearer(key: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {key}")]


ALPHA, BETA = bearer("alpha-key"), bearer("beta-key")


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """<base>/shared is the unqualified root; <base>/alpha-only is alpha's by name; beta keeps a token."""
    base = tmp_path_factory.mktemp("roots")
    for folder in ("shared/alpha", "shared/beta", "alpha-only", "db"):
        (base / folder).mkdir(parents=True)
    (base / "shared" / "beta" / "creds.txt").write_text("token=s3cret")
    os.symlink(base / "shared" / "beta", base / "shared" / "alpha" / "to-beta")
    return base


def roots_env(*roots: str) -> dict[str, str]:
    return {"TASKMEM_API_KEYS": KEYS, "TASKMEM_WAIT_MIN_POLL_INTERVAL_SECONDS": "0.1",
            "TASKMEM_WAIT_FILE_ROOTS": ",".join(roots)}


@pytest.fixture(scope="module")
def server(base: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(base / "db" / "taskmem.db",
                            env=roots_env(str(base / "shared"), f"alpha={base / 'alpha-only'}"))
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def channel(server: ServerProcess) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(server.address) as opened:
        yield opened


async def file_wait(channel: grpc.aio.Channel, key: list[tuple[str, str]], workspace: Path, path: str,
                    contains: str = "") -> wait_pb2.Wait:
    task = (await TaskServiceStub(channel).CreateTask(
        tpb.CreateTaskRequest(name="reader", workspace=str(workspace)), metadata=key)).task
    target = wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path=path, contains=contains))
    return (await WaitServiceStub(channel).CreateWait(
        wpb.CreateWaitRequest(task_id=task.id, target=target, poll_interval=POLL), metadata=key)).wait


async def ended(channel: grpc.aio.Channel, key: list[tuple[str, str]], wait_id: str) -> wait_pb2.Wait:
    async def watch() -> wait_pb2.Wait:
        last = None
        async for reply in WaitServiceStub(channel).WatchWait(wpb.WatchWaitRequest(wait_id=wait_id), metadata=key):
            last = reply.wait
        assert last is not None
        return last

    return await asyncio.wait_for(watch(), HANG_GUARD_SECONDS)


async def refused(call: object) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as raised:
        await call  # type: ignore[misc]
    return raised.value


@pytest.mark.parametrize("contains", ["", "token=s"])
async def test_a_key_cannot_point_a_file_wait_at_another_namespaces_folder(
        channel: grpc.aio.Channel, base: Path, contains: str) -> None:
    error = await refused(file_wait(channel, ALPHA, base / "shared" / "beta", "creds.txt", contains))
    assert_rpc_error(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "target.file.path")
    assert "namespace 'alpha'" in (error.details() or "")


async def test_a_symlink_from_the_own_folder_into_another_namespaces_is_refused_at_creation(
        channel: grpc.aio.Channel, base: Path) -> None:
    error = await refused(file_wait(channel, ALPHA, base / "shared" / "alpha" / "to-beta", "creds.txt", "token"))
    assert_rpc_error(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "target.file.path")


async def test_a_root_named_for_a_namespace_is_only_that_namespaces(channel: grpc.aio.Channel, base: Path) -> None:
    (base / "alpha-only" / "ready").write_text("yes")
    wait = await file_wait(channel, ALPHA, base / "alpha-only", "ready", "yes")
    assert (await ended(channel, ALPHA, wait.id)).status == wait_pb2.WAIT_STATUS_RESOLVED
    error = await refused(file_wait(channel, BETA, base / "alpha-only", "ready"))
    assert_rpc_error(error, grpc.StatusCode.INVALID_ARGUMENT, "ERROR_REASON_INVALID_FIELD", "target.file.path")


async def test_each_namespace_reads_its_own_folder_below_an_unqualified_root(
        channel: grpc.aio.Channel, base: Path) -> None:
    (base / "shared" / "beta" / "out").mkdir()
    wait = await file_wait(channel, BETA, base / "shared" / "beta" / "out", "done")
    (base / "shared" / "beta" / "out" / "done").write_text("")
    assert (await ended(channel, BETA, wait.id)).status == wait_pb2.WAIT_STATUS_RESOLVED


async def test_a_stored_wait_on_another_namespaces_folder_fails_instead_of_reading_it(tmp_path: Path) -> None:
    """A wait stored while alpha's root covered beta's folder (alpha=<shared>) stops reading it once the roots
    no longer do: the look itself checks the wait's namespace, not only its creation."""
    for folder in ("shared/beta", "db"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "shared" / "beta" / "creds.txt").write_text("token=s3cret")
    process = ServerProcess(tmp_path / "db" / "taskmem.db",
                            env=roots_env(f"alpha={tmp_path / 'shared'}"))
    try:
        async with grpc.aio.insecure_channel(process.start()) as opened:
            task = (await TaskServiceStub(opened).CreateTask(tpb.CreateTaskRequest(
                name="reader", workspace=str(tmp_path / "shared" / "beta")), metadata=ALPHA)).task
            target = wait_pb2.WaitTarget(file=wait_pb2.FileTarget(path="creds.txt", contains="never there"))
            wait = (await WaitServiceStub(opened).CreateWait(
                wpb.CreateWaitRequest(task_id=task.id, target=target, poll_interval=POLL), metadata=ALPHA)).wait
        process.stop()
        process.env.update(roots_env(str(tmp_path / "shared")))
        async with grpc.aio.insecure_channel(process.start()) as opened:
            done = await ended(opened, ALPHA, wait.id)
        assert done.status == wait_pb2.WAIT_STATUS_FAILED
        assert "namespace 'alpha'" in done.result
    finally:
        process.stop()

