"""A database written by the previous release (tests/data/upgrade, made by that release's own server with
make_fixture.py) opens on the current code, its migrations run, and every read answers what that release
answered: tasks, plans, actions and their logs, messages, memory and its searches, knowledge, episodes, artifacts,
patterns, state items, working memory, waits, events and their cursors. New fields the current code adds are
allowed; every field the release answered must be there with the same value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import grpc
import pytest

from taskmem.store.engines import shipped_migrations
from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support import server_process
from tests.support.server_process import ServerProcess
from tests.support.upgrade_fixture import read_everything

FIXTURES = Path(__file__).parent / "data" / "upgrade"
RELEASE = "f4aec01"  # the previous release: the last commit landed on main before this fixture was made


def _differences(recorded: Any, current: Any, path: str) -> list[str]:
    """Where current does not answer what recorded did (current may carry fields recorded lacks)."""
    if isinstance(recorded, dict):
        if not isinstance(current, dict):
            return [f"{path}: {recorded!r} became {current!r}"]
        return [difference for key, value in recorded.items()
                for difference in (_differences(value, current[key], f"{path}.{key}") if key in current
                                   else [f"{path}.{key}: missing (was {value!r})"])]
    if isinstance(recorded, list):
        if not isinstance(current, list) or len(current) != len(recorded):
            return [f"{path}: {len(recorded)} items became {current!r}"]
        return [difference for n, (old, new) in enumerate(zip(recorded, current))
                for difference in _differences(old, new, f"{path}[{n}]")]
    if isinstance(recorded, float) and isinstance(current, (int, float)):  # a search score: the same vectors
        return [] if abs(recorded - current) <= 1e-6 * max(1.0, abs(recorded)) else [f"{path}: {recorded} became {current}"]
    return [] if recorded == current else [f"{path}: {recorded!r} became {current!r}"]


def _load_postgres_fixture(server: ServerProcess) -> None:
    """The release's pg_dump (plain SQL, --inserts) into the test's empty database; psql's meta-commands
    (\\restrict) are psql's own and left out."""
    import psycopg

    sql = "\n".join(line for line in (FIXTURES / f"postgres-{RELEASE}.sql").read_text().splitlines()
                    if not line.startswith("\\"))
    with psycopg.connect(server.database_setting, autocommit=True) as connection:
        connection.execute(sql.encode())
        connection.execute("SELECT pg_catalog.set_config('search_path', '\"$user\", public', false)")


async def test_the_previous_release_database_reads_the_same_after_the_upgrade(tmp_path: Path) -> None:
    engine = server_process.ENGINE
    recorded = json.loads((FIXTURES / f"{engine}-{RELEASE}.reads.json").read_text())
    assert recorded["release"] == RELEASE
    # Maintenance off: the fixture's clock stopped when it was made, so its time-based chores (a stuck alert for
    # a task untouched for 30 min, archiving after days) would change it for reasons that are not the upgrade.
    server = ServerProcess(tmp_path / "upgraded.db", env={"TASKMEM_MAINTENANCE_INTERVAL_SECONDS": "0"})
    if engine == "sqlite":
        shutil.copyfile(FIXTURES / f"sqlite-{RELEASE}.db", server.database)
    else:
        _load_postgres_fixture(server)
    before = {row[0] for row in server.sql("SELECT number FROM schema_migrations")}

    server.start(timeout=120)
    try:
        after = {row[0] for row in server.sql("SELECT number FROM schema_migrations")}
        assert after == {number for number, _, _ in shipped_migrations(server.database_setting)} and before <= after
        async with grpc.aio.insecure_channel(server.address) as channel:
            current = await read_everything(channel, recorded["ids"])
            assert set(current) == set(recorded["reads"])
            differences = [difference for name, value in recorded["reads"].items()
                           for difference in _differences(value, current[name], name)]
            assert differences == [], '\n'.join(differences)

            # The event log goes on from the release's last cursor, with no hole.
            last = int(recorded["reads"]["ListEvents"]["events"][-1]["cursor"])
            await TaskServiceStub(channel).PostMessage(pb.PostMessageRequest(
                task_id=recorded["ids"]["task"], role=task_pb2.MESSAGE_ROLE_AGENT, content="after the upgrade"))
            later = await TaskServiceStub(channel).ListEvents(pb.ListEventsRequest(after_cursor=last))
            assert [event.cursor for event in later.events][:1] == [last + 1]
    finally:
        server.stop()


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_each_engine_has_a_fixture_with_every_read_recorded(engine: str) -> None:
    recorded = json.loads((FIXTURES / f"{engine}-{RELEASE}.reads.json").read_text())
    reads = recorded["reads"]
    assert len(reads["ListEvents"]["events"]) >= 30 and len(reads["SubscribeEvents(replay)"]) >= 30
    assert any(r.startswith("SearchMemories(semantic") and reads[r].get("hits") for r in reads)
    assert (FIXTURES / f"{engine}-{RELEASE}.{'db' if engine == 'sqlite' else 'sql'}").is_file()
