"""An agent recording its work in taskmem with the Python client.

It registers a task with a plan, follows the task's events in the background, works through
the plan recording each action, records a decision, keeps a fact it learned as project
knowledge, reads its task state back as the YAML it would put in its prompt, and completes the
task once the event stream has shown every step.

    make run                                        # in another terminal
    .venv/bin/python clients/python/examples/agent.py [--address 127.0.0.1:50051]

TASKMEM_API_KEY is sent as the token when set.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from google.protobuf import field_mask_pb2

from taskmem.v1 import event_pb2, memory_pb2, memory_service_pb2, state_service_pb2, task_pb2
from taskmem.v1 import task_service_pb2 as tasks
from taskmem_client import TaskmemClient, TaskmemError

PLAN = [
    task_pb2.PlanItemSpec(id="checkout", title="Check out the repository", tool_name="git"),
    task_pb2.PlanItemSpec(id="test", title="Run the test suite", tool_name="pytest", depends_on=["checkout"]),
    task_pb2.PlanItemSpec(id="fix", title="Fix the failing test", depends_on=["test"]),
]
WORK = {
    "checkout": "git clone --depth 1 git@example.com:shop/api.git",
    "test": "pytest -q: 1 failed (test_refund_rounding)",
    "fix": "round refunds half-even, as the ledger does",
}


async def follow(client: TaskmemClient, task_id: str) -> None:
    """Prints the task's events until it completes; resumes by itself if the connection drops."""
    async for event in client.subscribe(task_ids=[task_id]):
        print(f"  [event {event.cursor}] {event_pb2.EventType.Name(event.type)}")
        if event.type == event_pb2.EVENT_TYPE_TASK_STATUS_CHANGED and \
                event.payload.fields["to"].string_value == "TASK_STATUS_COMPLETED":
            return


async def run(address: str, token: str | None) -> None:
    async with TaskmemClient(address, token=token, timeout=10) as client:
        created = await client.tasks.CreateTask(tasks.CreateTaskRequest(
            name="fix the refund test", goal="Make the API's test suite pass", plan=PLAN))
        task_id = created.task.id
        print(f"agent: task {task_id} registered with {len(PLAN)} plan items")
        following = asyncio.create_task(follow(client, task_id))

        await client.tasks.UpdateTask(tasks.UpdateTaskRequest(
            task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_EXECUTING),
            update_mask=field_mask_pb2.FieldMask(paths=["status"])))
        for item in PLAN:
            await client.tasks.UpdatePlanItem(tasks.UpdatePlanItemRequest(
                task_id=task_id, item_id=item.id, status=task_pb2.PLAN_ITEM_STATUS_IN_PROGRESS))
            await client.tasks.RecordAction(tasks.RecordActionRequest(
                task_id=task_id, plan_item_id=item.id, type=task_pb2.ACTION_TYPE_TOOL, tool_name=item.tool_name,
                summary=WORK[item.id], status=task_pb2.ACTION_STATUS_SUCCEEDED))
            await client.tasks.UpdatePlanItem(tasks.UpdatePlanItemRequest(
                task_id=task_id, item_id=item.id, status=task_pb2.PLAN_ITEM_STATUS_COMPLETED, summary=WORK[item.id]))

        await client.state.AddDecision(state_service_pb2.AddDecisionRequest(
            task_id=task_id, text="round refunds half-even", detail="the ledger rounds half-even"))
        await client.memory.UpsertKnowledge(memory_service_pb2.UpsertKnowledgeRequest(
            category=memory_pb2.KNOWLEDGE_CATEGORY_CONVENTION, key="refunds.rounding", value="half-even",
            source="agent"))
        state = await client.state.GetTaskState(state_service_pb2.GetTaskStateRequest(task_id=task_id))
        print(f"agent: my state, as my prompt would carry it:\n{state.yaml}")

        await client.tasks.UpdateTask(tasks.UpdateTaskRequest(
            task=task_pb2.Task(id=task_id, status=task_pb2.TASK_STATUS_COMPLETED,
                               final_answer="Refunds now round half-even; the suite passes."),
            update_mask=field_mask_pb2.FieldMask(paths=["status", "final_answer"])))
        await asyncio.wait_for(following, 10)
        print("agent: done")


def main() -> None:
    parser = argparse.ArgumentParser(description="An agent recording its work in taskmem.")
    parser.add_argument("--address", default="127.0.0.1:50051")
    arguments = parser.parse_args()
    try:
        asyncio.run(run(arguments.address, os.environ.get("TASKMEM_API_KEY")))
    except TaskmemError as error:
        raise SystemExit(f"agent: {error}") from None


if __name__ == "__main__":
    main()
