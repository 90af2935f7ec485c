"""TaskmemSaver passes LangGraph's own checkpointer conformance suite (langgraph-checkpoint-conformance) against
a live server: every base capability and every extended one, counted test by test (a capability whose
method is not overridden is skipped, not failed, so the counts are what show it ran)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES, EXTENDED_CAPABILITIES

from taskmem_langgraph import TaskmemSaver
from tests.support.server_process import ServerProcess

# The suite's own test counts per capability (langgraph-checkpoint-conformance 0.0.2).
BASE_COUNTS = {"put": 17, "put_writes": 10, "get_tuple": 10, "list": 16, "delete_thread": 5}
EXTENDED_COUNTS = {"delete_for_runs": 7, "copy_thread": 8, "prune": 8}


@pytest.fixture(scope="module")
def checkpoint_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("conformance") / "taskmem.db")
    process.start()
    yield process
    process.stop()


async def test_the_saver_passes_every_base_and_extended_conformance_test(checkpoint_server: ServerProcess) -> None:
    @checkpointer_test(name="TaskmemSaver")
    async def taskmem_saver() -> AsyncIterator[TaskmemSaver]:
        saver = TaskmemSaver(checkpoint_server.address)
        yield saver
        await saver.aclose()

    report = await validate(taskmem_saver)

    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert failures == {}
    counts = {name: (result.tests_passed, result.tests_failed, result.tests_skipped)
              for name, result in report.results.items()}
    assert {cap.value for cap in BASE_CAPABILITIES} == set(BASE_COUNTS)
    assert {cap.value for cap in EXTENDED_CAPABILITIES} == set(EXTENDED_COUNTS)
    assert counts == {name: (n, 0, 0) for name, n in {**BASE_COUNTS, **EXTENDED_COUNTS}.items()}
    assert sum(BASE_COUNTS.values()) == 58 and sum(EXTENDED_COUNTS.values()) == 23
    assert report.passed_all_base() and report.passed_all()
    assert all(report.results[name].detected for name in EXTENDED_COUNTS)
