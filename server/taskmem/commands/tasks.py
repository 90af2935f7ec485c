"""`taskmem tasks list`, `taskmem tasks show ID` and `taskmem tasks usage ID`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TextIO

from taskmem.commands.connection import TaskClient
from taskmem.commands.formatting import (
    display_time,
    is_set,
    one_line,
    plan_item_status_name,
    proto_json_dict,
    render_table,
    short_enum_name,
    task_status_name,
)
from taskmem.v1 import task_pb2
from taskmem.v1 import task_service_pb2 as pb

MAX_PAGE_SIZE = 500
NAME_WIDTH = 60
FINAL_ANSWER_PREVIEW_LINES = 20
ITEM_MARKS = {
    task_pb2.PLAN_ITEM_STATUS_PENDING: "[ ]",
    task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS: "[>]",
    task_pb2.PLAN_ITEM_STATUS_COMPLETED: "[x]",
    task_pb2.PLAN_ITEM_STATUS_FAILED: "[!]",
    task_pb2.PLAN_ITEM_STATUS_SKIPPED: "[-]",
    task_pb2.PLAN_ITEM_STATUS_BLOCKED: "[#]",
    task_pb2.PLAN_ITEM_STATUS_INPUT_REQUIRED: "[Q]",  # a question to a person is open
    task_pb2.PLAN_ITEM_STATUS_AUTH_REQUIRED: "[A]",  # an authorisation by a person is awaited
}


async def list_tasks(client: TaskClient, out: TextIO, *, statuses: Sequence[task_pb2.TaskStatus.ValueType],
                     limit: int | None, awaiting_person: bool = False) -> None:
    """A table of tasks, most recently updated first, following next_page_token until the end or the limit;
    awaiting_person: only those waiting on a person."""
    rows: list[list[str]] = []
    page_token = ""
    while limit is None or len(rows) < limit:
        page_size = MAX_PAGE_SIZE if limit is None else min(limit - len(rows), MAX_PAGE_SIZE)
        page = await client.stub.ListTasks(
            pb.ListTasksRequest(statuses=statuses, page_size=page_size, page_token=page_token,
                                awaiting_person=awaiting_person), **client.unary)
        rows.extend([task.id, task_status_name(task.status), display_time(task.update_time),
                     one_line(task.name, NAME_WIDTH)] for task in page.tasks)
        page_token = page.next_page_token
        if not page_token:
            break
    if limit is not None:
        rows = rows[:limit]
    if not rows:
        print("No tasks.", file=out)
        return
    for line in render_table(["ID", "STATUS", "UPDATED", "NAME"], rows):
        print(line, file=out)


async def show_task(client: TaskClient, out: TextIO, task_id: str, *, as_json: bool) -> None:
    """The task, its current plan with item statuses, and GetProgress's summary."""
    fetched = await client.stub.GetTask(pb.GetTaskRequest(task_id=task_id), **client.unary)
    progress = await client.stub.GetProgress(pb.GetProgressRequest(task_id=task_id), **client.unary)
    if as_json:
        document = {"task": proto_json_dict(fetched.task),
                    "plan": proto_json_dict(fetched.plan) if fetched.HasField("plan") else None,
                    "progress": proto_json_dict(progress)}
        print(json.dumps(document, indent=2, ensure_ascii=False), file=out)
        return
    for line in describe_task(fetched.task):
        print(line, file=out)
    print(file=out)
    for line in describe_plan(fetched.plan if fetched.HasField("plan") else None):
        print(line, file=out)
    print(file=out)
    print("Progress", file=out)
    for line in (progress.summary or "(no summary)").splitlines():
        print(f"  {line}", file=out)


async def show_usage(client: TaskClient, out: TextIO, task_id: str, *, as_json: bool) -> None:
    """GetTaskUsage: a table of the server's model calls by model and purpose, then the totals."""
    usage = await client.stub.GetTaskUsage(pb.GetTaskUsageRequest(task_id=task_id), **client.unary)
    if as_json:
        print(json.dumps(proto_json_dict(usage), indent=2, ensure_ascii=False), file=out)
        return
    rows = [[line.model, short_enum_name(task_pb2.ModelCallPurpose, line.purpose, "MODEL_CALL_PURPOSE_"),
             str(line.calls), str(line.failed_calls), str(line.refused_calls), str(line.tokens_in),
             str(line.tokens_out), f"{line.latency.ToTimedelta().total_seconds():.3f}"] for line in usage.model_usage]
    if rows:
        for line in render_table(["MODEL", "PURPOSE", "CALLS", "FAILED", "REFUSED", "TOKENS IN", "TOKENS OUT",
                                  "SECONDS"], rows):
            print(line, file=out)
    else:
        print("No model calls.", file=out)
    print(file=out)
    print(f"Server models  in {usage.model_tokens_in}  out {usage.model_tokens_out}", file=out)
    print(f"Agents ({usage.actions} actions)  in {usage.agent_tokens_in}  out {usage.agent_tokens_out}", file=out)
    print(f"Total  in {usage.tokens_in}  out {usage.tokens_out}", file=out)
    if usage.HasField("namespace_budget"):
        budget = usage.namespace_budget
        state = "used up: model work is refused" if budget.exhausted else "available"
        print(f"Namespace budget  {budget.used_tokens} of {budget.limit_tokens} tokens ({state})", file=out)


def describe_task(task: task_pb2.Task) -> list[str]:
    lines = [f"Task {task.id}: {task.name}"]
    fields: list[tuple[str, str]] = [("status", task_status_name(task.status))]
    if task.goal:
        fields.append(("goal", one_line(task.goal, 200)))
    if task.workspace:
        fields.append(("workspace", task.workspace))
    fields.append(("approval", short_enum_name(task_pb2.ApprovalMode, task.approval_mode, "APPROVAL_MODE_")))
    if task.namespace:
        fields.append(("namespace", task.namespace))
    for label, field in [("created", "create_time"), ("plan generated", "plan_generate_time"),
                         ("execution started", "execution_start_time"),
                         ("synthesis started", "synthesis_start_time"), ("completed", "complete_time"),
                         ("paused", "pause_time"), ("archived", "archive_time"), ("updated", "update_time")]:
        if is_set(getattr(task, field)):
            fields.append((label, display_time(getattr(task, field))))
    summary = task.error_summary
    if summary.message or summary.failed_stage or summary.failed_step:
        where = ", ".join(part for part in [f"stage {summary.failed_stage}" if summary.failed_stage else "",
                                            f"step {summary.failed_step}" if summary.failed_step else ""] if part)
        fields.append(("error", f"{summary.message}" + (f" ({where})" if where else "")))
    width = max(len(label) for label, _ in fields)
    lines.extend(f"  {label + ':':<{width + 1}} {value}" for label, value in fields)
    if task.final_answer:
        answer = task.final_answer.splitlines()
        lines.append("  final answer:")
        lines.extend(f"    {line}" for line in answer[:FINAL_ANSWER_PREVIEW_LINES])
        if len(answer) > FINAL_ANSWER_PREVIEW_LINES:
            lines.append(f"    … {len(answer) - FINAL_ANSWER_PREVIEW_LINES} more lines (taskmem export shows it all)")
    return lines


def describe_plan(plan: task_pb2.Plan | None) -> list[str]:
    if plan is None or not plan.items:
        return ["No plan."]
    count = f"{len(plan.items)} item{'' if len(plan.items) == 1 else 's'}"
    lines = [f"Plan v{plan.version} ({count})" + (f": {plan.reason}" if plan.reason else "")]
    id_width = max(len(item.id) for item in plan.items)
    status_width = max(len(plan_item_status_name(item.status)) for item in plan.items)
    for item in plan.items:
        mark = ITEM_MARKS.get(item.status, "[?]")
        line = f"  {mark} {item.id:<{id_width}}  {plan_item_status_name(item.status):<{status_width}}  {item.title}"
        if item.status_source == task_pb2.PLAN_ITEM_STATUS_SOURCE_INFERRED:
            line += "  (inferred from a message)"
        if item.stage:
            line += f"  (stage {item.stage})"
        if item.depends_on:
            line += f"  after {', '.join(item.depends_on)}"
        lines.append(line)
        if item.summary:
            lines.append(f"      {' ' * id_width}  → {item.summary}")
        if item.active_issue:
            lines.append(f"      {' ' * id_width}  issue: {item.active_issue}")
    return lines
