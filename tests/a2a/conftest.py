"""Fixtures of the A2A tests: a taskmem client on the module's server, and `taskmem a2a` in front of it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from taskmem_client import TaskmemClient
from tests.a2a.agent_process import AgentProcess
from tests.support.server_process import ServerProcess


@pytest.fixture(scope="module")
def front_end(server: ServerProcess) -> Iterator[AgentProcess]:
    process = AgentProcess(server.address, front_end=True)
    process.start()
    yield process
    process.stop()


@pytest.fixture
async def taskmem(server: ServerProcess) -> AsyncIterator[TaskmemClient]:
    async with TaskmemClient(server.address) as client:
        yield client
