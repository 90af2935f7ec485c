"""The `taskmem` command and waits on a person (issue 28, point 2): `tasks list --awaiting-person` and
`--status input_required`, and `tasks show` saying who must answer what."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest

from taskmem.cli import main
from taskmem.v1 import task_pb2, wait_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1 import wait_service_pb2 as wpb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from taskmem.v1.wait_service_pb2_grpc import WaitServiceStub
from tests.support.server_process import ServerProcess


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of this module's own, so `tasks list` sees only the tasks made here."""
    process = ServerProcess(tmp_path_factory.mktemp("cli-person-waits") / "taskmem.db")
    process.start()
    yield process
    process.stop()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_tasks_list_and_show_say_which_tasks_wait_on_a_person(
        server: ServerProcess, capsys: pytest.CaptureFixture[str]) -> None:
    with grpc.insecure_channel(server.address) as channel:
        tasks, waits = TaskServiceStub(channel), WaitServiceStub(channel)
        made = [tasks.CreateTask(pb.CreateTaskRequest(name=name, plan=[task_pb2.PlanItemSpec(id="go", title="Go")]))
                .task.id for name in ("asks the task", "asks for an item", "asks nobody")]
        for task_id in made:
            tasks.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING)))
        for task_id, item_id in ((made[0], ""), (made[1], "go")):
            waits.CreateWait(wpb.CreateWaitRequest(task_id=task_id, target=wait_pb2.WaitTarget(
                external=wait_pb2.ExternalTarget(kind=wait_pb2.EXTERNAL_WAIT_KIND_INPUT, question="Which region?",
                                                 resolver="alex", plan_item_id=item_id))))

    code, out = run_cli(capsys, "tasks", "list", "--awaiting-person", "--address", server.address)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == made[1::-1]
    code, out = run_cli(capsys, "tasks", "list", "--status", "input_required", "--address", server.address)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == [made[0]]
    assert out.splitlines()[1].split()[1] == "input_required"
    code, out = run_cli(capsys, "tasks", "show", made[1], "--address", server.address)
    assert code == 0 and "[Q] go" in out and "alex must answer 'Which region?' (for item go;" in out
