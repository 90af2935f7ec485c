"""Writes to a taskmem server for the @a2a-js/sdk test (which has no taskmem client of its own): one JSON
request per stdin line, one JSON answer per stdout line.

  {"op": "create", "name": "..."}                  -> {"task_id": "tsk_..."}
  {"op": "status", "task_id": "...", "status": "EXECUTING"}
  {"op": "message", "task_id": "...", "content": "..."}   (role AGENT)
  {"op": "get", "task_id": "..."}                  -> {"status": "TASK_STATUS_...", "name": "..."}
"""

from __future__ import annotations

import asyncio
import json
import sys

from google.protobuf import field_mask_pb2

from taskmem.v1 import task_pb2, task_service_pb2
from taskmem_client import TaskmemClient


async def answer(client: TaskmemClient, request: dict[str, str]) -> dict[str, str]:
    tasks = client.tasks
    if request["op"] == "create":
        created = await tasks.CreateTask(task_service_pb2.CreateTaskRequest(name=request["name"]))
        return {"task_id": created.task.id}
    if request["op"] == "status":
        await tasks.UpdateTask(task_service_pb2.UpdateTaskRequest(
            task=task_pb2.Task(id=request["task_id"], status=task_pb2.TaskStatus.Value(
                f"TASK_STATUS_{request['status']}")), update_mask=field_mask_pb2.FieldMask(paths=["status"])))
        return {}
    if request["op"] == "message":
        await tasks.PostMessage(task_service_pb2.PostMessageRequest(
            task_id=request["task_id"], role=task_pb2.MESSAGE_ROLE_AGENT, content=request["content"]))
        return {}
    task = (await tasks.GetTask(task_service_pb2.GetTaskRequest(task_id=request["task_id"]))).task
    return {"status": task_pb2.TaskStatus.Name(task.status), "name": task.name}


async def main(address: str) -> None:
    async with TaskmemClient(address) as client:
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            print(json.dumps(await answer(client, json.loads(line))), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
