"""The Python client's example (clients/python/examples/agent.py) runs as written against a live server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem_client import TaskmemClient
from tests.support.server_process import ServerProcess

EXAMPLE = Path(__file__).resolve().parents[2] / "clients" / "python" / "examples" / "agent.py"


async def test_the_agent_example_records_its_work_and_exits_0(fresh_server: ServerProcess) -> None:
    address = fresh_server.start()
    result = subprocess.run([sys.executable, str(EXAMPLE), "--address", address],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "registered with 3 plan items" in result.stdout
    assert "EVENT_TYPE_ACTION_RECORDED" in result.stdout
    assert "- id: fix" in result.stdout  # the task-state YAML
    assert result.stdout.rstrip().endswith("agent: done")
    async with TaskmemClient(address) as client:
        listed = await client.tasks.ListTasks(pb.ListTasksRequest())
        assert [task.status for task in listed.tasks] == [task_pb2.TASK_STATUS_COMPLETED]
        actions = await client.tasks.ListActions(pb.ListActionsRequest(task_id=listed.tasks[0].id))
        assert len(actions.actions) == 3
