"""The embedding model is recorded with the vectors: a server configured for another model refuses to
start and names `taskmem reembed`, which rebuilds every vector with the new model (with a progress bar).
On either engine (--engine postgres: reembed --database postgresql://…)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
import numpy as np
import pytest

from taskmem.core.memory import MemoryFilter
from taskmem.store.memory import memory_vectors
from taskmem.store.sqlite.connection import connect
from taskmem.store.sqlite.statements import Statements
from taskmem.store.access import Reader
from taskmem.store.engines import is_postgres
from taskmem.v1 import memory_pb2
from taskmem.v1 import memory_service_pb2 as mpb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.fake_embeddings import FakeEmbeddings, embed, fake_embeddings
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS

DECISIONS = ["Use Redis for caching", "Keep Postgres as the system of record", "Deploy on Kubernetes",
             "Retry webhooks with exponential backoff", "Store uploads in S3"]


@pytest.fixture
def endpoint() -> Iterator[FakeEmbeddings]:
    with fake_embeddings() as fake:
        yield fake


def model_flags(endpoint: FakeEmbeddings, model: str) -> list[str]:
    dimension = model.rsplit("-", 1)[1]
    return ["--embedding-backend", "openai", "--embedding-url", endpoint.base_url, "--embedding-model", model,
            "--embedding-dimension", dimension]


def setting(database: Path) -> str:
    """What --database says for the test's database on the engine the tests run on."""
    return ServerProcess(database).database_setting


@contextmanager
def reader_of(database: Path) -> Iterator[Reader]:
    """A Reader on the test's database, on either engine."""
    url = setting(database)
    if is_postgres(url):
        from taskmem.store.postgres.connection import connect as connect_postgres
        from taskmem.store.postgres.statements import Statements as PostgresStatements

        with connect_postgres(url) as opened:
            yield PostgresStatements(opened)
        return
    connection = connect(url)
    try:
        yield Statements(connection)
    finally:
        connection.close()


def reembed(database: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskmem", "reembed", "--database", setting(database), *flags],
                          capture_output=True, text=True, timeout=120)


def write_decisions(database: Path, flags: list[str]) -> None:
    """Memory entries with vectors of the configured model, written through a real server (which embeds
    them in the background: a search that waits for the backlog returns once they are)."""
    server = ServerProcess(database, *flags)
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            task = TaskServiceStub(channel).CreateTask(pb.CreateTaskRequest(name="reembed")).task
            state = StateServiceStub(channel)
            for text in DECISIONS:
                state.AddDecision(spb.AddDecisionRequest(task_id=task.id, text=text))
            MemoryServiceStub(channel).SearchMemories(mpb.SearchMemoriesRequest(
                query="anything", mode=memory_pb2.SEARCH_MODE_FULLTEXT, wait_for_embeddings=True), timeout=30)
    finally:
        assert server.stop() == 0


def stored_vectors(database: Path) -> tuple[tuple[str, int] | None, int]:
    with reader_of(database) as reader:
        count = reader.fetchall("SELECT count(*) FROM memory_embeddings")[0][0]
        return memory_vectors.recorded_model(reader), int(count)


def test_a_server_configured_for_another_model_refuses_to_start_and_names_taskmem_reembed(
        tmp_path: Path, endpoint: FakeEmbeddings) -> None:
    database = tmp_path / "taskmem.db"
    write_decisions(database, model_flags(endpoint, "words-8"))
    refused = ServerProcess(database, *model_flags(endpoint, "words-16"))
    with pytest.raises(RuntimeError) as failure:
        refused.start()
    assert refused.process is not None and refused.process.wait(timeout=30) != 0
    message = str(failure.value)
    assert "taskmem reembed" in message
    assert "openai:words-8 (8 dimensions)" in message and "openai:words-16 (16 dimensions)" in message
    assert "Traceback" not in message
    assert stored_vectors(database) == (("openai:words-8", 8), len(DECISIONS))


def test_reembed_rebuilds_every_vector_with_the_new_model_and_the_server_then_starts(
        tmp_path: Path, endpoint: FakeEmbeddings) -> None:
    database = tmp_path / "taskmem.db"
    write_decisions(database, model_flags(endpoint, "words-8"))
    done = reembed(database, *model_flags(endpoint, "words-16"), "--batch-size", "2")
    assert done.returncode == 0, done.stderr
    assert f"re-embedded {len(DECISIONS)} memory entries with openai:words-16 (16 dimensions)" in done.stdout
    assert f"{len(DECISIONS)}/{len(DECISIONS)} 100%" in done.stderr  # the progress bar's last state
    assert "reembed [" in done.stderr
    assert stored_vectors(database) == (("openai:words-16", 16), len(DECISIONS))
    # The vectors are the new model's: the nearest entry to a decision's own text is that decision.
    with reader_of(database) as reader:
        query = np.array(embed(DECISIONS[2], 16), dtype=np.float32)
        [(seq, distance)] = memory_vectors.nearest(reader, "default", query / np.linalg.norm(query), 1,
                                                   f=MemoryFilter())
        summary = reader.fetchone("SELECT summary FROM memory_entries WHERE seq = ?", (seq,))
        assert summary is not None and summary[0] == DECISIONS[2] and distance == pytest.approx(0.0, abs=1e-6)
    server = ServerProcess(database, *model_flags(endpoint, "words-16"))
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            TaskServiceStub(channel).ListTasks(pb.ListTasksRequest(), timeout=HANG_GUARD_SECONDS)
    finally:
        assert server.stop() == 0


def test_reembed_gives_vectors_to_entries_written_without_embeddings(tmp_path: Path, endpoint: FakeEmbeddings) -> None:
    database = tmp_path / "taskmem.db"
    write_decisions(database, ["--embedding-backend", "none"])
    assert stored_vectors(database) == (None, 0)
    done = reembed(database, *model_flags(endpoint, "words-8"))
    assert done.returncode == 0, done.stderr
    assert stored_vectors(database) == (("openai:words-8", 8), len(DECISIONS))


def test_reembed_with_no_embedding_backend_says_what_to_set(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "taskmem", "reembed", "--database", str(tmp_path / "taskmem.db")],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "TASKMEM_EMBEDDING_BACKEND": "none"})
    assert done.returncode == 2
    assert "embedding_backend is none" in done.stderr and "builtin or openai" in done.stderr


def test_reembed_leaves_the_old_vectors_when_the_endpoint_fails(tmp_path: Path, endpoint: FakeEmbeddings) -> None:
    database = tmp_path / "taskmem.db"
    write_decisions(database, model_flags(endpoint, "words-8"))
    unreachable = ["--embedding-backend", "openai", "--embedding-url", "http://127.0.0.1:9/v1",
                   "--embedding-model", "words-16", "--embedding-dimension", "16"]
    done = reembed(database, *unreachable)
    assert done.returncode == 1
    assert "old vectors are unchanged" in done.stderr and "Traceback" not in done.stderr
    assert stored_vectors(database) == (("openai:words-8", 8), len(DECISIONS))
