"""`taskmem export ID DIR`: the directory layout, written atomically, from hand-built messages and a real server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2

from taskmem.cli import main
from taskmem.commands.export_directory import ExportDirectory, context_file_name, safe_file_label
from taskmem.commands.runner import CommandError
from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.server_process import ServerProcess


def at(seconds: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=1_790_000_000 + seconds)


def struct(**values: Any) -> struct_pb2.Struct:
    made = struct_pb2.Struct()
    made.update(values)
    return made


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def entries(directory: Path) -> list[str]:
    return sorted(str(path.relative_to(directory)) for path in directory.rglob("*"))


# --- the writer, from hand-built messages (no server) ------------------------------------------

def hand_built_task() -> task_pb2.Task:
    return task_pb2.Task(
        id="tsk_1", namespace="default", name="Deploy", goal="ship it", status=task_pb2.TASK_STATUS_FAILED,
        plan_version=2, final_answer="# Result\nnot shipped\n", create_time=at(0), plan_generate_time=at(1),
        execution_start_time=at(2), complete_time=at(9), update_time=at(9), context=struct(repo="coursefolio"),
        error_summary=task_pb2.ErrorSummary(failed_stage="2", failed_step="push", message="registry refused"))


def test_export_directory_writes_every_file_from_proto_messages(tmp_path: Path) -> None:
    task = hand_built_task()
    first = task_pb2.Plan(task_id="tsk_1", version=1, items=[task_pb2.PlanItem(id="build", title="build")])
    second = task_pb2.Plan(task_id="tsk_1", version=2, reason="registry moved", items=[
        task_pb2.PlanItem(id="build", title="build", status=task_pb2.PLAN_ITEM_STATUS_COMPLETED),
        task_pb2.PlanItem(id="push", title="push", ordinal=1, depends_on=["build"])])
    action = task_pb2.Action(id="act_1", task_id="tsk_1", type=task_pb2.ACTION_TYPE_CLI, summary="docker push",
                             status=task_pb2.ACTION_STATUS_FAILED, input=struct(cmd="docker push"),
                             error="denied", duration=duration_pb2.Duration(seconds=3), create_time=at(3))
    line = task_pb2.ActionLogLine(action_id="act_1", sequence=1, stream="stderr", content="denied", create_time=at(4))
    target = tmp_path / "out" / "tsk_1"
    with ExportDirectory(target) as export:
        export.write_plan(first, current=False)
        export.write_plan(second, current=True)
        export.append_action(action, [line])
        export.append_action(task_pb2.Action(id="act_2", summary="think"), None)
        export.write_context_snapshot(task_pb2.ContextSnapshot(id="ctx_1", sequence=0, label="initial context",
                                                               content="raw context", create_time=at(1)))
        export.write_context_snapshot(task_pb2.ContextSnapshot(id="ctx_2", sequence=1, label="after summarization",
                                                               content="short", summarized=True))
        export.append_message(task_pb2.Message(id="msg_1", content="hi", role=task_pb2.MESSAGE_ROLE_USER))
        assert not target.exists(), "nothing appears before commit"
        export.commit(task)

    assert entries(target) == ["context_history", "context_history/00_initial_context.txt",
                               "context_history/01_after_summarization.txt", "execution.log.jsonl",
                               "final_answer.md", "messages.jsonl", "metadata.json", "plan.json", "plan_v1.json"]
    assert entries(tmp_path / "out") == ["tsk_1", *(f"tsk_1/{name}" for name in entries(target))], "no staging left"
    metadata = json.loads((target / "metadata.json").read_text())
    assert (metadata["id"], metadata["name"], metadata["goal"], metadata["status"]) == ("tsk_1", "Deploy", "ship it",
                                                                                       "TASK_STATUS_FAILED")
    assert metadata["version"] == "1.0" and metadata["final_answer_file"] == "final_answer.md"
    assert metadata["error_summary"] == {"failed_stage": "2", "failed_step": "push", "message": "registry refused"}
    assert metadata["timestamps"]["created_at"] == at(0).ToJsonString()
    assert metadata["timestamps"]["completed_at"] == at(9).ToJsonString()
    assert metadata["timestamps"]["synthesis_started_at"] is None
    assert metadata["context"] == {"repo": "coursefolio"} and metadata["plan_file"] == "plan.json"
    assert [entry["file"] for entry in metadata["context_history"]] == [
        "context_history/00_initial_context.txt", "context_history/01_after_summarization.txt"]
    assert metadata["context_history"][1]["summarized"] is True
    plan = json.loads((target / "plan.json").read_text())
    assert plan["version"] == 2 and plan["reason"] == "registry moved"
    assert [item["status"] for item in plan["items"]] == ["PLAN_ITEM_STATUS_COMPLETED", "PLAN_ITEM_STATUS_UNSPECIFIED"]
    assert json.loads((target / "plan_v1.json").read_text())["version"] == 1
    log = read_jsonl(target / "execution.log.jsonl")
    assert [entry["id"] for entry in log] == ["act_1", "act_2"]
    assert log[0]["input"] == {"cmd": "docker push"} and log[0]["error"] == "denied" and log[0]["duration"] == "3s"
    assert log[0]["log"] == [{"sequence": 1, "stream": "stderr", "content": "denied",
                              "create_time": at(4).ToJsonString()}]
    assert log[1]["log"] is None
    assert (target / "final_answer.md").read_text() == "# Result\nnot shipped\n"
    assert (target / "context_history" / "00_initial_context.txt").read_text() == "raw context"
    assert read_jsonl(target / "messages.jsonl")[0]["content"] == "hi"


def test_a_task_without_plan_or_final_answer_gets_no_plan_or_answer_file(tmp_path: Path) -> None:
    task = task_pb2.Task(id="tsk_2", name="bare", status=task_pb2.TASK_STATUS_PENDING, create_time=at(0))
    with ExportDirectory(tmp_path / "bare") as export:
        export.commit(task)
    assert entries(tmp_path / "bare") == ["context_history", "execution.log.jsonl", "messages.jsonl", "metadata.json"]
    metadata = json.loads((tmp_path / "bare" / "metadata.json").read_text())
    assert metadata["final_answer_file"] is None and metadata["error_summary"] is None
    assert metadata["plan_file"] is None and metadata["status"] == "TASK_STATUS_PENDING"
    assert (tmp_path / "bare" / "execution.log.jsonl").read_text() == ""


def test_an_export_that_fails_midway_leaves_neither_the_directory_nor_its_staging(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), ExportDirectory(tmp_path / "half") as export:
        export.write_plan(task_pb2.Plan(version=1), current=True)
        export.append_action(task_pb2.Action(id="act_1"), [])
        raise RuntimeError("the server went away")
    assert os.listdir(tmp_path) == []


def test_an_existing_directory_is_refused_and_left_untouched(tmp_path: Path) -> None:
    existing = tmp_path / "taken"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    with pytest.raises(CommandError, match="already exists"), ExportDirectory(existing):
        pass
    assert entries(tmp_path) == ["taken", "taken/keep.txt"]


def test_a_directory_that_appears_during_the_export_is_not_replaced(tmp_path: Path) -> None:
    target = tmp_path / "raced"
    with pytest.raises(CommandError), ExportDirectory(target) as export:
        target.mkdir()  # someone else made it meanwhile; an empty directory would silently be renamed over
        export.commit(task_pb2.Task(id="tsk_3"))
    assert os.listdir(target) == [] and os.listdir(tmp_path) == ["raced"]


@pytest.mark.parametrize(("label", "safe"), [
    ("initial context", "initial_context"),
    ("before stage 2/3: deploy", "before_stage_2_3_deploy"),
    ("../../etc/passwd", "etc_passwd"),
    ("...", "snapshot"),
    ("", "snapshot"),
    ("résumé ✓ done", "r_sum_done"),
    ("x" * 300, "x" * 80),
])
def test_snapshot_labels_become_filesystem_safe_names(label: str, safe: str) -> None:
    assert safe_file_label(label) == safe
    assert context_file_name(7, label) == f"07_{safe}.txt"


def test_more_than_a_hundred_snapshots_get_wider_numbers_that_still_sort_in_order(tmp_path: Path) -> None:
    with ExportDirectory(tmp_path / "many") as export:
        for sequence in range(105):
            export.write_context_snapshot(task_pb2.ContextSnapshot(sequence=sequence, label="step",
                                                                   content=str(sequence)))
        export.commit(task_pb2.Task(id="tsk_4"))
    names = sorted(os.listdir(tmp_path / "many" / "context_history"))
    assert names[0] == "000_step.txt" and names[-1] == "104_step.txt" and len(names) == 105
    assert [(tmp_path / "many" / "context_history" / name).read_text() for name in names] == [
        str(n) for n in range(105)]


# --- end to end against a real server ----------------------------------------------------------

@pytest.fixture(scope="module")
def export_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    process = ServerProcess(tmp_path_factory.mktemp("export") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def stub(export_server: ServerProcess) -> Iterator[TaskServiceStub]:
    with grpc.insecure_channel(export_server.address) as channel:
        yield TaskServiceStub(channel)


def set_status(stub: TaskServiceStub, task_id: str, *statuses: task_pb2.TaskStatus.ValueType) -> None:
    for status in statuses:
        stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=status)))


def spec(item_id: str, *depends_on: str) -> task_pb2.PlanItemSpec:
    return task_pb2.PlanItemSpec(id=item_id, title=f"do {item_id}", stage="1", depends_on=depends_on)


def export(capsys: pytest.CaptureFixture[str], address: str, task_id: str, target: Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["export", task_id, str(target), "--address", address])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_export_of_a_replanned_completed_task_writes_its_whole_record(
        export_server: ServerProcess, stub: TaskServiceStub, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="Deploy coursefolio", goal="ship v1.2.3",
                                                plan=[spec("build"), spec("push", "build")])).task
    set_status(stub, task.id, task_pb2.TASK_STATUS_PLANNING, task_pb2.TASK_STATUS_EXECUTING)
    stub.RecordContextSnapshot(pb.RecordContextSnapshotRequest(task_id=task.id, label="initial context",
                                                               content="the whole context"))
    build = stub.RecordAction(pb.RecordActionRequest(task_id=task.id, plan_item_id="build", summary="docker build",
                                                     type=task_pb2.ACTION_TYPE_CLI, input=struct(cmd="docker build")))
    stub.AppendActionLog(pb.AppendActionLogRequest(action_id=build.action.id, lines=[
        pb.LogLineInput(content="step 1/3"), pb.LogLineInput(stream="stderr", content="warning: cache miss")]))
    stub.CompleteAction(pb.CompleteActionRequest(action_id=build.action.id, status=task_pb2.ACTION_STATUS_SUCCEEDED,
                                                 output=struct(image="app:1.2.3", exit_code=0)))
    stub.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.id, item_id="build",
                                                 status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    stub.RecordAction(pb.RecordActionRequest(task_id=task.id, summary="registry moved; replanning",
                                             type=task_pb2.ACTION_TYPE_SYSTEM, status=task_pb2.ACTION_STATUS_FAILED,
                                             error="registry.old: 404"))
    stub.RecordContextSnapshot(pb.RecordContextSnapshotRequest(task_id=task.id, label="before stage 2/deploy",
                                                               content="summary", summarized=True))
    set_status(stub, task.id, task_pb2.TASK_STATUS_PLANNING)
    stub.ReplacePlan(pb.ReplacePlanRequest(task_id=task.id, reason="registry moved",
                                           items=[spec("build"), spec("retag", "build"), spec("push", "retag")]))
    set_status(stub, task.id, task_pb2.TASK_STATUS_EXECUTING, task_pb2.TASK_STATUS_SYNTHESIZING)
    stub.PostMessage(pb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT, content="done"))
    stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task.id, status=task_pb2.TASK_STATUS_COMPLETED,
                                                            final_answer="Deployed **v1.2.3**.\n")))

    target = tmp_path / "bank" / task.id
    code, out, err = export(capsys, export_server.address, task.id, target)
    assert (code, err) == (0, "") and str(target) in out

    assert entries(target) == ["context_history", "context_history/00_initial_context.txt",
                               "context_history/01_before_stage_2_deploy.txt", "execution.log.jsonl",
                               "final_answer.md", "messages.jsonl", "metadata.json", "plan.json", "plan_v1.json"]
    metadata = json.loads((target / "metadata.json").read_text())
    assert (metadata["id"], metadata["name"], metadata["goal"]) == (task.id, "Deploy coursefolio", "ship v1.2.3")
    assert metadata["status"] == "TASK_STATUS_COMPLETED" and metadata["version"] == "1.0"
    assert metadata["final_answer_file"] == "final_answer.md" and metadata["error_summary"] is None
    assert all(metadata["timestamps"][key] for key in ("created_at", "plan_generated_at", "execution_started_at",
                                                       "synthesis_started_at", "completed_at", "updated_at"))
    assert (target / "final_answer.md").read_text() == "Deployed **v1.2.3**.\n"

    current, older = json.loads((target / "plan.json").read_text()), json.loads((target / "plan_v1.json").read_text())
    assert current["version"] == 2 and current["reason"] == "registry moved"
    assert [item["id"] for item in current["items"]] == ["build", "retag", "push"]
    assert current["items"][0]["status"] == "PLAN_ITEM_STATUS_COMPLETED", "carried over from v1"
    assert older["version"] == 1 and [item["id"] for item in older["items"]] == ["build", "push"]

    log = read_jsonl(target / "execution.log.jsonl")
    assert [entry["summary"] for entry in log] == ["docker build", "registry moved; replanning"]
    assert log[0]["status"] == "ACTION_STATUS_SUCCEEDED" and log[0]["output"] == {"image": "app:1.2.3", "exit_code": 0}
    assert isinstance(log[0]["output"]["exit_code"], int), "a whole number comes back whole, not 0.0"
    assert log[0]["input"] == {"cmd": "docker build"} and log[0]["plan_item_id"] == "build"
    assert [(line["sequence"], line["stream"], line["content"]) for line in log[0]["log"]] == [
        (1, "stdout", "step 1/3"), (2, "stderr", "warning: cache miss")]
    assert log[1]["status"] == "ACTION_STATUS_FAILED" and log[1]["error"] == "registry.old: 404" and log[1]["log"] == []

    assert (target / "context_history" / "00_initial_context.txt").read_text() == "the whole context"
    assert (target / "context_history" / "01_before_stage_2_deploy.txt").read_text() == "summary"
    assert [entry["label"] for entry in metadata["context_history"]] == ["initial context", "before stage 2/deploy"]
    assert [message["content"] for message in read_jsonl(target / "messages.jsonl")] == ["done"]
    assert sorted(os.listdir(target.parent)) == [task.id], "no staging directory left beside it"


def test_export_reads_every_page_of_actions_and_a_running_action_log(
        export_server: ServerProcess, stub: TaskServiceStub, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from taskmem.commands import export as export_command

    monkeypatch.setattr(export_command, "PAGE_SIZE", 3)
    task = stub.CreateTask(pb.CreateTaskRequest(name="many actions")).task
    for n in range(7):
        stub.RecordAction(pb.RecordActionRequest(task_id=task.id, summary=f"step {n}",
                                                 status=task_pb2.ACTION_STATUS_SUCCEEDED))
    running = stub.RecordAction(pb.RecordActionRequest(task_id=task.id, summary="still going")).action
    stub.AppendActionLog(pb.AppendActionLogRequest(action_id=running.id, lines=[pb.LogLineInput(content="so far")]))
    for n in range(4):
        stub.RecordContextSnapshot(pb.RecordContextSnapshotRequest(task_id=task.id, label=f"s{n}", content=str(n)))
    code, _, err = export(capsys, export_server.address, task.id, tmp_path / "many")
    assert (code, err) == (0, "")
    log = read_jsonl(tmp_path / "many" / "execution.log.jsonl")
    assert [entry["summary"] for entry in log] == [f"step {n}" for n in range(7)] + ["still going"]
    assert log[-1]["status"] == "ACTION_STATUS_RUNNING" and [line["content"] for line in log[-1]["log"]] == ["so far"]
    assert sorted(os.listdir(tmp_path / "many" / "context_history")) == [f"0{n}_s{n}.txt" for n in range(4)]
    assert not (tmp_path / "many" / "plan.json").exists()


def test_export_of_a_failed_task_records_its_error_summary(export_server: ServerProcess, stub: TaskServiceStub,
                                                          tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="doomed", plan=[spec("build")])).task
    stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(
        id=task.id, status=task_pb2.TASK_STATUS_FAILED,
        error_summary=task_pb2.ErrorSummary(failed_stage="1", failed_step="build", message="out of disk"))))
    code, _, _ = export(capsys, export_server.address, task.id, tmp_path / "doomed")
    metadata = json.loads((tmp_path / "doomed" / "metadata.json").read_text())
    assert code == 0 and metadata["status"] == "TASK_STATUS_FAILED" and metadata["final_answer_file"] is None
    assert metadata["error_summary"] == {"failed_stage": "1", "failed_step": "build", "message": "out of disk"}
    assert not (tmp_path / "doomed" / "final_answer.md").exists()
    assert not list((tmp_path / "doomed").glob("plan_v*.json")), "a task never replanned has only plan.json"


def test_export_of_an_unknown_task_fails_with_not_found_and_creates_nothing(
        export_server: ServerProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = export(capsys, export_server.address, "tsk_missing", tmp_path / "missing")
    assert (code, out) == (1, "") and err.startswith("taskmem: NOT_FOUND: ") and err.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_export_into_an_existing_directory_fails_before_calling_the_server(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").mkdir()
    capsys.readouterr()
    code = main(["export", "tsk_any", str(tmp_path / "taken"), "--address", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == 1 and err == f"taskmem: {tmp_path / 'taken'} already exists; export writes a new directory\n"
