"""The `taskmem` command against a real server: tasks list/show, events tail, errors, auth and TLS."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from taskmem.cli import main
from taskmem.commands import tasks as tasks_command
from taskmem.v1 import memory_pb2, state_pb2, task_pb2
from taskmem.v1 import memory_service_pb2 as mspb
from taskmem.v1 import state_service_pb2 as spb
from taskmem.v1 import task_service_pb2 as pb
from taskmem.v1.memory_service_pb2_grpc import MemoryServiceStub
from taskmem.v1.state_service_pb2_grpc import StateServiceStub
from taskmem.v1.task_service_pb2_grpc import TaskServiceStub
from tests.support.certificates import needs_openssl, self_signed_localhost
from tests.support.server_process import ServerProcess
from tests.support.eventually import HANG_GUARD_SECONDS


@pytest.fixture(scope="module")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server of this module's own, so `tasks list` sees only the tasks made here."""
    process = ServerProcess(tmp_path_factory.mktemp("cli") / "taskmem.db")
    process.start()
    yield process
    process.stop()


@pytest.fixture(scope="module")
def address(cli_server: ServerProcess) -> str:
    return cli_server.address


@pytest.fixture(scope="module")
def stub(cli_server: ServerProcess) -> Iterator[TaskServiceStub]:
    with grpc.insecure_channel(cli_server.address) as channel:
        yield TaskServiceStub(channel)


def spec(item_id: str, *depends_on: str) -> task_pb2.PlanItemSpec:
    return task_pb2.PlanItemSpec(id=item_id, title=f"do {item_id}", depends_on=depends_on)


def set_status(stub: TaskServiceStub, task_id: str, *statuses: task_pb2.TaskStatus.ValueType) -> None:
    for status in statuses:
        stub.UpdateTask(pb.UpdateTaskRequest(task=task_pb2.Task(id=task_id, status=status)))


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_cli_process(*argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "taskmem", *argv], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def deploy_task(stub: TaskServiceStub) -> str:
    """An executing task: build done, push in progress, run pending after push."""
    task = stub.CreateTask(pb.CreateTaskRequest(name="Deploy coursefolio", goal="ship v1.2.3",
                                                plan=[spec("build"), spec("push", "build"), spec("run", "push")])).task
    set_status(stub, task.id, task_pb2.TASK_STATUS_PLANNING, task_pb2.TASK_STATUS_EXECUTING)
    stub.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.id, item_id="build",
                                                 status=task_pb2.PLAN_ITEM_STATUS_COMPLETED, summary="image built"))
    stub.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.id, item_id="push",
                                                 status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS))
    stub.PostMessage(pb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_AGENT,
                                           content="pushing the image now"))
    return str(task.id)


# --- tasks list --------------------------------------------------------------------------------

def test_tasks_list_prints_a_table_following_every_page(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    made = [stub.CreateTask(pb.CreateTaskRequest(name=f"paged task {n}")).task.id for n in range(5)]
    monkeypatch.setattr(tasks_command, "MAX_PAGE_SIZE", 2)  # five tasks and more → at least three pages
    code, out, err = run_cli(capsys, "tasks", "list", "--address", address)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "STATUS", "UPDATED", "NAME"]
    listed = [line.split()[0] for line in lines[1:]]
    assert set(made + [deploy_task]) <= set(listed) and len(listed) == len(set(listed))
    assert listed[:5] == made[::-1], "most recently updated first"
    deploy_row = next(line for line in lines if line.startswith(deploy_task))
    assert deploy_row.split()[1] == "executing" and deploy_row.endswith("Deploy coursefolio")
    assert deploy_row.split()[2].endswith("Z")


def test_tasks_list_filters_by_status_and_stops_at_the_limit(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str]) -> None:
    paused = [stub.CreateTask(pb.CreateTaskRequest(name=f"paused {n}")).task.id for n in range(3)]
    for task_id in paused:
        set_status(stub, task_id, task_pb2.TASK_STATUS_PAUSED)
    code, out, _ = run_cli(capsys, "tasks", "list", "--status", "paused", "--address", address)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == paused[::-1]
    code, out, _ = run_cli(capsys, "tasks", "list", "--status", "PAUSED,executing", "--status",
                           "TASK_STATUS_COMPLETED", "--limit", "2", "--address", address)
    assert code == 0 and [line.split()[0] for line in out.splitlines()[1:]] == paused[::-1][:2]
    code, out, _ = run_cli(capsys, "tasks", "list", "--status", "executing", "--address", address)
    assert deploy_task in out and not any(task_id in out for task_id in paused)


def test_tasks_list_says_so_when_no_task_matches(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "tasks", "list", "--status", "archived", "--address", address)
    assert (code, out) == (0, "No tasks.\n")


def test_an_unknown_status_is_a_usage_error_naming_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["tasks", "list", "--status", "done"])
    assert exited.value.code == 2
    assert "unknown status 'done'" in capsys.readouterr().err


# --- tasks show --------------------------------------------------------------------------------

def test_tasks_show_prints_the_task_its_plan_item_statuses_and_progress(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tasks", "show", deploy_task, "--address", address)
    assert (code, err) == (0, "")
    assert f"Task {deploy_task}: Deploy coursefolio" in out
    assert "status:" in out and "executing" in out and "goal:" in out and "ship v1.2.3" in out
    assert "Plan v1 (3 items)" in out
    plan_lines = {line[6:].split()[0]: line for line in out.splitlines() if line.startswith("  [")}
    assert plan_lines["build"].startswith("  [x]") and "completed" in plan_lines["build"]
    assert plan_lines["push"].startswith("  [>]") and "in_progress" in plan_lines["push"]
    assert plan_lines["run"].startswith("  [ ]") and "after push" in plan_lines["run"]
    assert "→ image built" in out
    progress = stub.GetProgress(pb.GetProgressRequest(task_id=deploy_task)).summary
    assert out.rstrip().endswith("\n".join(f"  {line}" for line in progress.splitlines()))


def test_tasks_show_json_prints_task_plan_and_progress_as_proto_json(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "tasks", "show", deploy_task, "--json", "--address", address)
    document = json.loads(out)
    assert code == 0 and set(document) == {"task", "plan", "progress"}
    assert document["task"]["id"] == deploy_task and document["task"]["status"] == "TASK_STATUS_EXECUTING"
    assert [item["status"] for item in document["plan"]["items"]] == [
        "PLAN_ITEM_STATUS_COMPLETED", "PLAN_ITEM_STATUS_IN_PROGRESS", "PLAN_ITEM_STATUS_PENDING"]
    assert document["progress"]["current"]["id"] == "push" and document["progress"]["summary"]


def test_tasks_show_of_a_task_without_a_plan_says_no_plan(address: str, stub: TaskServiceStub,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    task_id = stub.CreateTask(pb.CreateTaskRequest(name="planless")).task.id
    code, out, _ = run_cli(capsys, "tasks", "show", task_id, "--address", address)
    assert code == 0 and "No plan." in out
    code, out, _ = run_cli(capsys, "tasks", "show", task_id, "--json", "--address", address)
    assert json.loads(out)["plan"] is None


# --- errors ------------------------------------------------------------------------------------

def test_an_unknown_task_prints_one_not_found_line_and_exits_nonzero(address: str, stub: TaskServiceStub,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "tasks", "show", "tsk_doesnotexist", "--address", address)
    assert code == 1 and out == ""
    assert err.startswith("taskmem: NOT_FOUND: ") and err.count("\n") == 1


def test_an_unreachable_server_prints_one_unavailable_line_without_a_traceback(tmp_path: Path) -> None:
    result = run_cli_process("tasks", "list", "--address", f"127.0.0.1:{free_port()}")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("taskmem: UNAVAILABLE: ") and "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1


# --- events tail -------------------------------------------------------------------------------

def test_events_tail_prints_one_task_stored_events_in_cursor_order_and_exits(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "events", "tail", "--task", deploy_task, "--address", address)
    lines = out.splitlines()
    stored = stub.ListEvents(pb.ListEventsRequest(task_ids=[deploy_task], page_size=500)).events
    assert code == 0 and len(lines) == len(stored) > 5
    cursors = [int(line.split()[0]) for line in lines]
    assert cursors == [event.cursor for event in stored] and cursors == sorted(cursors)
    assert all(line.split()[3] == deploy_task for line in lines)
    first = lines[0].split(None, 4)
    assert first[1].endswith("Z") and first[2] == "task_created" and first[4] == "Deploy coursefolio"
    assert any("pending → planning" in line for line in lines)
    assert any("message_posted" in line and "agent: pushing the image now" in line for line in lines)
    assert any("plan_item_updated" in line and "build completed" in line for line in lines)


def test_events_tail_after_a_cursor_and_by_type_prints_only_the_later_matching_events(
        address: str, stub: TaskServiceStub, deploy_task: str, capsys: pytest.CaptureFixture[str]) -> None:
    stored = stub.ListEvents(pb.ListEventsRequest(task_ids=[deploy_task], page_size=500)).events
    middle = stored[len(stored) // 2].cursor
    code, out, _ = run_cli(capsys, "events", "tail", "--task", deploy_task, "--after", str(middle),
                           "--address", address)
    assert code == 0 and [int(line.split()[0]) for line in out.splitlines()] == [
        event.cursor for event in stored if event.cursor > middle]
    code, out, _ = run_cli(capsys, "events", "tail", "--task", deploy_task, "--type", "task_status_changed",
                           "--address", address)
    assert code == 0 and [line.split()[2] for line in out.splitlines()] == ["task_status_changed"] * 2


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_events_tail_follow_prints_new_events_live_and_exits_0_when_stopped(
        address: str, stub: TaskServiceStub, deploy_task: str, stop_signal: int) -> None:
    follower = subprocess.Popen(
        [sys.executable, "-m", "taskmem", "events", "tail", "--follow", "--task", deploy_task,
         "--address", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = LineReader(follower.stdout)
        assert "task_created" in lines.next_line(timeout=HANG_GUARD_SECONDS)  # the replay of stored events comes first
        marker = f"live message {time.monotonic_ns()}"
        stub.PostMessage(pb.PostMessageRequest(task_id=deploy_task, role=task_pb2.MESSAGE_ROLE_USER, content=marker))
        assert lines.wait_for(marker, timeout=HANG_GUARD_SECONDS)
        follower.send_signal(stop_signal)
        assert follower.wait(timeout=HANG_GUARD_SECONDS) == 0
        assert follower.stderr is not None and follower.stderr.read() == ""
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_events_tail_follow_from_the_end_shows_only_new_events(address: str, stub: TaskServiceStub,
                                                              deploy_task: str) -> None:
    follower = subprocess.Popen(
        [sys.executable, "-m", "taskmem", "events", "tail", "-f", "--after", "-1", "--task", deploy_task,
         "--address", address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = LineReader(follower.stdout)
        marker = f"only new {time.monotonic_ns()}"
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while not lines.lines and time.monotonic() < deadline:  # the subscription may not be live yet: repeat
            stub.PostMessage(pb.PostMessageRequest(task_id=deploy_task, role=task_pb2.MESSAGE_ROLE_USER,
                                                   content=marker))
            time.sleep(0.3)
        assert lines.lines and all(marker in line for line in lines.lines)
        follower.send_signal(signal.SIGINT)
        assert follower.wait(timeout=HANG_GUARD_SECONDS) == 0
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


def test_a_negative_cursor_without_follow_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["events", "tail", "--after", "-1"])
    assert exited.value.code == 2 and "--after" in capsys.readouterr().err


# --- auth and TLS ------------------------------------------------------------------------------

def test_token_and_namespace_flags_are_sent_as_call_metadata(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    server = ServerProcess(tmp_path / "auth.db", "--api-key", "team-key:alpha,beta")
    address = server.start()
    try:
        with grpc.insecure_channel(address) as channel:
            stub = TaskServiceStub(channel)
            in_beta = stub.CreateTask(pb.CreateTaskRequest(name="beta task"), metadata=[
                ("authorization", "Bearer team-key"), ("x-taskmem-namespace", "beta")]).task.id
        code, _, err = run_cli(capsys, "tasks", "list", "--address", address)
        assert code == 1 and err.startswith("taskmem: UNAUTHENTICATED: ")
        code, out, _ = run_cli(capsys, "tasks", "list", "--address", address, "--token", "team-key")
        assert (code, out) == (0, "No tasks.\n"), "the key's first namespace is alpha"
        code, out, _ = run_cli(capsys, "tasks", "list", "--address", address, "--token", "team-key",
                               "--namespace", "beta")
        assert code == 0 and in_beta in out
        code, _, err = run_cli(capsys, "tasks", "list", "--address", address, "--token", "team-key",
                               "--namespace", "gamma")
        assert code == 1 and err.startswith("taskmem: PERMISSION_DENIED: ")
    finally:
        server.stop()


@needs_openssl
def test_tls_ca_file_connects_to_a_tls_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cert, key = self_signed_localhost(tmp_path)
    server = ServerProcess(tmp_path / "tls.db", "--tls-cert-file", str(cert), "--tls-key-file", str(key))
    address = server.start()
    try:
        code, out, _ = run_cli(capsys, "tasks", "list", "--address", address, "--tls-ca-file", str(cert))
        assert (code, out) == (0, "No tasks.\n")
    finally:
        server.stop()


# --- helpers -----------------------------------------------------------------------------------

def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])



TWELVE_DECISIONS = ["Host the docs on GitHub Pages", "Invoice customers monthly", "Name the mascot Pip",
                    "Paint the office walls green", "Order pizza for the launch party", "Hire two interns in June",
                    "Back up laptops to an external drive", "Print flyers on recycled paper",
                    "Use tabs for indentation", "Book the venue in Lisbon", "Water the plants on Fridays",
                    "Translate the app into Korean"]


def test_state_show_prints_the_task_state_yaml_and_names_what_a_small_budget_left_out(
        cli_server: ServerProcess, address: str, stub: TaskServiceStub, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="state via cli", plan=[spec("fetch"), spec("build", "fetch")]))
    with grpc.insecure_channel(cli_server.address) as channel:
        for text in TWELVE_DECISIONS:  # about unrelated things: none is asked about beside another
            StateServiceStub(channel).AddDecision(spb.AddDecisionRequest(task_id=task.task.id, text=text))
    code, out, err = run_cli(capsys, "state", "show", task.task.id, "--address", address)
    assert code == 0 and err == ""
    shown = yaml.safe_load(out)
    assert shown["task"]["id"] == task.task.id
    assert [subtask["id"] for subtask in shown["subtasks"]] == ["fetch", "build"]
    assert len(shown["decisions_log"]) == 10  # the newest ten; all twelve stay stored as memory entries

    code, out, err = run_cli(capsys, "state", "show", task.task.id, "--budget", "60", "--address", address)
    assert code == 0 and len(out) < 400
    assert err.startswith("# ") and "left out:" in err


def test_state_show_and_items_never_list_a_superseded_decision(
        cli_server: ServerProcess, address: str, stub: TaskServiceStub, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="chart choice", plan=[spec("draw")]))
    chain = ["Use Chart.js for the charts", "Use Plotly for the charts instead of Chart.js"]
    with grpc.insecure_channel(cli_server.address) as channel:
        for text in chain:
            StateServiceStub(channel).AddDecision(spb.AddDecisionRequest(task_id=task.task.id, text=text))
    code, out, _ = run_cli(capsys, "state", "show", task.task.id, "--address", address)
    assert code == 0 and yaml.safe_load(out)["decisions_log"] == [chain[1]]
    code, out, _ = run_cli(capsys, "state", "items", task.task.id, "--address", address)
    assert code == 0 and chain[1] in out and chain[0] not in out


def test_state_history_lists_versions_and_state_diff_shows_what_changed_since_a_cursor(
        cli_server: ServerProcess, address: str, stub: TaskServiceStub, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="diff via cli", plan=[spec("fetch"), spec("build", "fetch")]))
    code, out, _ = run_cli(capsys, "state", "history", task.task.id, "--address", address)
    planned, created = out.splitlines()  # newest first: CreateTask with a plan is two events
    cursor = int(planned.split("\t")[0])
    assert code == 0 and created.split("\t")[2] == "task_created" and planned.split("\t")[2] == "plan_replaced"
    stub.UpdatePlanItem(pb.UpdatePlanItemRequest(task_id=task.task.id, item_id="fetch",
                                                 status=task_pb2.PLAN_ITEM_STATUS_COMPLETED))
    code, out, _ = run_cli(capsys, "state", "diff", task.task.id, "--from", str(cursor), "--address", address)
    assert code == 0 and out.startswith(f"--- {task.task.id}@{cursor}\n")
    changed = [line for line in out.splitlines()[2:] if line[:1] in "+-"]
    assert any(line.startswith("+") and "status: completed" in line for line in changed)
    assert any(line.startswith("-") and "status: pending" in line for line in changed)
    code, out, _ = run_cli(capsys, "state", "show", task.task.id, "--as-of", str(cursor), "--address", address)
    assert code == 0 and [s["status"] for s in yaml.safe_load(out)["subtasks"]] == ["pending", "pending"]
    code, out, _ = run_cli(capsys, "state", "diff", task.task.id, "--from", str(cursor), "--to", str(cursor),
                           "--address", address)
    assert code == 0 and out == f"no change between {cursor} and {cursor}\n"


def test_state_items_prints_the_structured_state_one_line_each(
        cli_server: ServerProcess, address: str, stub: TaskServiceStub, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="items via cli")).task
    code, out, _ = run_cli(capsys, "state", "items", task.id, "--address", address)
    assert code == 0 and out == "No current state items.\n"
    said = stub.PostMessage(pb.PostMessageRequest(task_id=task.id, role=task_pb2.MESSAGE_ROLE_USER,
                                                  content="Use Redis for caching")).message.id
    with grpc.insecure_channel(cli_server.address) as channel:
        StateServiceStub(channel).UpsertStateItems(spb.UpsertStateItemsRequest(task_id=task.id, items=[
            state_pb2.StateItemCandidate(type=state_pb2.STATE_ITEM_TYPE_DECISION, text="Use Redis for caching",
                                         refs=[said])]))
    code, out, _ = run_cli(capsys, "state", "items", task.id, "--address", address)
    assert code == 0
    assert any("DECISION" in line and "Use Redis for caching" in line for line in out.splitlines())


def test_state_show_of_an_unknown_task_exits_1_with_not_found(address: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "state", "show", "task_missing", "--address", address)
    assert code == 1 and out == "" and err.startswith("taskmem: NOT_FOUND:")


def test_memory_search_prints_hits_best_first_with_the_match_marked(
        cli_server: ServerProcess, address: str, stub: TaskServiceStub, capsys: pytest.CaptureFixture[str]) -> None:
    task = stub.CreateTask(pb.CreateTaskRequest(name="memory via cli")).task
    with grpc.insecure_channel(cli_server.address) as channel:
        MemoryServiceStub(channel).AddMemoryEntries(mspb.AddMemoryEntriesRequest(entries=[
            mspb.NewMemoryEntry(task_id=task.id, type=memory_pb2.MEMORY_TYPE_DECISION,
                                summary="Use pgloader to copy the tables"),
            mspb.NewMemoryEntry(task_id=task.id, type=memory_pb2.MEMORY_TYPE_DISCOVERY,
                                summary="The database has three undocumented tables")]))
    code, out, _ = run_cli(capsys, "memory", "search", "pgloader", "--mode", "fulltext", "--task", task.id,
                           "--address", address)
    assert code == 0
    header, *hits = out.splitlines()
    assert header.split()[:3] == ["SCORE", "FOUND", "BY"]
    assert len(hits) == 1 and "decision" in hits[0] and "[pgloader]" in hits[0]
    assert float(hits[0].split()[0]) > 0, "a full-text hit's score is shown in significant digits, never 0.000"

    code, out, _ = run_cli(capsys, "memory", "search", "kubernetes", "--mode", "fulltext", "--task", task.id,
                           "--address", address)
    assert code == 0 and out.startswith("No memories match.") and "taskmem knowledge" in out


def test_knowledge_lists_entries_by_category_and_finds_them_by_text(
        cli_server: ServerProcess, address: str, capsys: pytest.CaptureFixture[str]) -> None:
    with grpc.insecure_channel(cli_server.address) as channel:
        memory = MemoryServiceStub(channel)
        memory.UpsertKnowledge(mspb.UpsertKnowledgeRequest(
            category=memory_pb2.KNOWLEDGE_CATEGORY_FACT, key="cli-registry", value="registry.example.com/app",
            source="walkthrough", confidence=0.9))
        memory.UpsertKnowledge(mspb.UpsertKnowledgeRequest(
            category=memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION, key="cli-branches", value="feature/* off main"))
    code, out, _ = run_cli(capsys, "knowledge", "registry.example", "--address", address)
    header, *rows = out.splitlines()
    assert code == 0 and header.split()[:3] == ["CATEGORY", "KEY", "VALUE"]
    assert len(rows) == 1 and rows[0].split()[:3] == ["fact", "cli-registry", "registry.example.com/app"]
    assert "0.90" in rows[0] and "walkthrough" in rows[0]
    code, out, _ = run_cli(capsys, "knowledge", "cli-", "--category", "convention", "--address", address)
    assert code == 0 and [row.split()[1] for row in out.splitlines()[1:]] == ["cli-branches"]
    code, out, _ = run_cli(capsys, "knowledge", "no-such-thing", "--address", address)
    assert code == 0 and out == "No knowledge matches.\n"

class LineReader:
    """Reads a subprocess's stdout on a thread so a test can wait for a line with a timeout."""

    def __init__(self, stream: object) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()
        self._next = 0

    def _read(self, stream: object) -> None:
        for line in stream:  # type: ignore[attr-defined]
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()

    def next_line(self, timeout: float) -> str:
        with self._changed:
            self._changed.wait_for(lambda: len(self.lines) > self._next, timeout=timeout)
            assert len(self.lines) > self._next, "no output line in time"
            self._next += 1
            return self.lines[self._next - 1]

    def wait_for(self, text: str, timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: any(text in line for line in self.lines), timeout=timeout)


assert os.name == "posix", "these tests send POSIX signals"
