"""Lays one task out as a directory of files, written atomically.

    DIR/
      metadata.json          always: id, name, goal, status, approval_mode, timestamps, plan_file,
                             final_answer_file, error_summary, context_history, version "1.0"
      execution.log.jsonl    always (empty without actions): one JSON object per action, oldest
                             first, with its log lines under "log"
      messages.jsonl         always (empty without messages): the transcript, oldest first
      context_history/       always (empty without snapshots): NN_label.txt per context snapshot,
                             NN its two-digit sequence
      plan.json              when the task has a plan: the current plan (proto JSON of Plan)
      plan_vN.json           for every older plan version N
      final_answer.md        when the task has a final answer

Enums are written by their proto names (`TASK_STATUS_PENDING`, `APPROVAL_MODE_AUTO`), as in proto
JSON. JSON objects the caller sent (context, metadata, action input/output) are stored by protobuf
as doubles; a whole number is written back without a fraction (`"exit_code": 0`, not `0.0`).

Everything is written into a hidden temporary directory next to DIR, each file and directory is
fsynced, and the temporary directory is then renamed to DIR, so a crash leaves either no DIR or a
complete one (plus, at worst, a stray `.DIR.partial-*` directory). DIR must not exist.

No gRPC here: the writer takes proto messages, so it can be driven by anything that has them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from taskmem.commands.formatting import is_set, proto_json_dict
from taskmem.commands.runner import CommandError
from taskmem.v1 import task_pb2

EXPORT_FORMAT_VERSION = "1.0"
FINAL_ANSWER_FILE = "final_answer.md"
CONTEXT_HISTORY_DIR = "context_history"
MAX_LABEL_LENGTH = 80
TIMESTAMP_FIELDS = [  # metadata.json key → Task field
    ("created_at", "create_time"),
    ("plan_generated_at", "plan_generate_time"),
    ("execution_started_at", "execution_start_time"),
    ("synthesis_started_at", "synthesis_start_time"),
    ("completed_at", "complete_time"),
    ("paused_at", "pause_time"),
    ("archived_at", "archive_time"),
    ("updated_at", "update_time"),
]


def safe_file_label(label: str) -> str:
    """A snapshot label as a file-name part: letters, digits, '.', '-' and '_' only, never empty or hidden."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", label).strip("._-")
    return cleaned[:MAX_LABEL_LENGTH].rstrip("._-") or "snapshot"


def context_file_name(sequence: int, label: str, width: int = 2) -> str:
    return f"{sequence:0{width}d}_{safe_file_label(label)}.txt"


def metadata_document(task: task_pb2.Task, *, has_plan: bool, context_files: list[dict[str, Any]]) -> dict[str, Any]:
    summary = task.error_summary
    has_error = bool(summary.failed_stage or summary.failed_step or summary.message)
    return {
        "id": task.id,
        "name": task.name,
        "goal": task.goal,
        "status": task_pb2.TaskStatus.Name(task.status)
        if task.status in task_pb2.TaskStatus.values() else str(task.status),
        "namespace": task.namespace,
        "workspace": task.workspace,
        "approval_mode": task_pb2.ApprovalMode.Name(task.approval_mode)
        if task.approval_mode in task_pb2.ApprovalMode.values() else str(task.approval_mode),
        "callback_url": task.callback_url,
        "context": proto_json_dict(task.context),
        "metadata": proto_json_dict(task.metadata),
        "timestamps": {key: getattr(task, field).ToJsonString() if is_set(getattr(task, field)) else None
                       for key, field in TIMESTAMP_FIELDS},
        "plan_version": task.plan_version,
        "plan_file": "plan.json" if has_plan else None,
        "final_answer_file": FINAL_ANSWER_FILE if task.final_answer else None,
        "error_summary": {"failed_stage": summary.failed_stage or None,
                          "failed_step": summary.failed_step or None,
                          "message": summary.message or None} if has_error else None,
        "context_history": context_files,
        "version": EXPORT_FORMAT_VERSION,
    }


def _json_line(document: Any) -> str:
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")) + "\n"


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class ExportDirectory:
    """Builds DIR in a temporary directory; commit() makes it appear whole, leaving the block without it discards it.

        with ExportDirectory(target) as export:
            export.write_plan(plan, current=True)
            export.append_action(action, log_lines)
            ...
            export.commit(task)
    """

    def __init__(self, target: Path) -> None:
        self.target = Path(target)
        self.staging: Path | None = None
        self._log: IO[str] | None = None
        self._messages: IO[str] | None = None
        self._has_plan = False
        self._snapshots: list[tuple[task_pb2.ContextSnapshot, Path]] = []
        self._committed = False

    def __enter__(self) -> ExportDirectory:
        self.check_target_is_free()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        self.staging = Path(tempfile.mkdtemp(prefix=f".{self.target.name}.partial-", dir=self.target.parent))
        (self.staging / CONTEXT_HISTORY_DIR).mkdir()
        self._log = open(self.staging / "execution.log.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        self._messages = open(self.staging / "messages.jsonl", "w", encoding="utf-8")  # noqa: SIM115
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._close_streams()
        if not self._committed and self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)

    def check_target_is_free(self) -> None:
        if os.path.lexists(self.target):
            raise CommandError(f"{self.target} already exists; export writes a new directory")

    # --- the parts -----------------------------------------------------------------------------

    def write_plan(self, plan: task_pb2.Plan, *, current: bool) -> None:
        """The current plan as plan.json, an older version as plan_vN.json."""
        name = "plan.json" if current else f"plan_v{plan.version}.json"
        self._has_plan = self._has_plan or current
        self._write_text(name, json.dumps(proto_json_dict(plan), indent=2, ensure_ascii=False) + "\n")

    def append_action(self, action: task_pb2.Action, log_lines: list[task_pb2.ActionLogLine] | None) -> None:
        """One execution-log line: the action as proto JSON, plus "log" (None when its lines were not read)."""
        document = proto_json_dict(action)
        document["log"] = None if log_lines is None else [
            {"sequence": line.sequence, "stream": line.stream, "content": line.content,
             "create_time": line.create_time.ToJsonString() if is_set(line.create_time) else None}
            for line in log_lines]
        assert self._log is not None, "use ExportDirectory in a with block"
        self._log.write(_json_line(document))

    def append_message(self, message: task_pb2.Message) -> None:
        assert self._messages is not None, "use ExportDirectory in a with block"
        self._messages.write(_json_line(proto_json_dict(message)))

    def write_context_snapshot(self, snapshot: task_pb2.ContextSnapshot) -> None:
        """The snapshot's text as context_history/NN_label.txt (renumbered wider at commit past 99)."""
        path = Path(CONTEXT_HISTORY_DIR) / context_file_name(snapshot.sequence, snapshot.label)
        if self.staging is not None and (self.staging / path).exists():  # two snapshots with one sequence
            path = path.with_name(f"{path.stem}_{snapshot.id}.txt")
        self._write_text(str(path), snapshot.content)
        self._snapshots.append((snapshot, path))

    # --- finishing -----------------------------------------------------------------------------

    def commit(self, task: task_pb2.Task) -> Path:
        """Write metadata.json and final_answer.md, fsync everything and rename the whole to DIR."""
        assert self.staging is not None, "use ExportDirectory in a with block"
        context_files = self._widen_context_file_names()
        if task.final_answer:
            self._write_text(FINAL_ANSWER_FILE, task.final_answer)
        metadata = metadata_document(task, has_plan=self._has_plan, context_files=context_files)
        self._write_text("metadata.json", json.dumps(metadata, indent=2, ensure_ascii=False) + "\n")
        self._close_streams()
        for name in ("execution.log.jsonl", "messages.jsonl"):
            self._fsync_file(self.staging / name)
        _fsync_directory(self.staging / CONTEXT_HISTORY_DIR)
        _fsync_directory(self.staging)
        self.check_target_is_free()
        os.rename(self.staging, self.target)
        self._committed = True
        _fsync_directory(self.target.parent)
        return self.target

    def _widen_context_file_names(self) -> list[dict[str, Any]]:
        """Two-digit numbers sort correctly up to 99; with more snapshots every name gets the same wider number."""
        assert self.staging is not None
        width = max([2] + [len(str(snapshot.sequence)) for snapshot, _ in self._snapshots])
        listed = []
        for snapshot, path in self._snapshots:
            if width > 2:
                wider = path.with_name(f"{snapshot.sequence:0{width}d}" + path.name[path.name.index("_"):])
                os.rename(self.staging / path, self.staging / wider)
                path = wider
            listed.append({"file": path.as_posix(), "label": snapshot.label, "sequence": snapshot.sequence,
                           "summarized": snapshot.summarized,
                           "create_time": snapshot.create_time.ToJsonString() if is_set(snapshot.create_time)
                           else None})
        return listed

    def _write_text(self, relative: str, text: str) -> None:
        assert self.staging is not None, "use ExportDirectory in a with block"
        with open(self.staging / relative, "w", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())

    @staticmethod
    def _fsync_file(path: Path) -> None:
        with open(path, "rb") as file:
            os.fsync(file.fileno())

    def _close_streams(self) -> None:
        for stream in (self._log, self._messages):
            if stream is not None and not stream.closed:
                stream.close()
