// A unary call of each service besides TaskService, through the typed clients
// createTaskmemClient returns, against a live server.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { KnowledgeCategory, WaitStatus } from "../src/index.js";
import { liveServer } from "../test-support/live.js";

describe("every service has a typed client", () => {
  const live = liveServer();

  test("client.waits creates an external wait and resolves it", async () => {
    const { task } = await live.client.tasks.createTask({ name: "await approval" });
    const { wait } = await live.client.waits.createWait({
      taskId: task!.id,
      criteria: "release approved",
      target: { kind: { case: "external", value: { resolver: "release manager" } } },
    });
    const resolved = await live.client.waits.resolveWait({ waitId: wait!.id, result: "approved" });
    assert.equal(resolved.wait?.status, WaitStatus.RESOLVED);
  });

  test("client.state renders a task's state with its plan as YAML", async () => {
    const { task } = await live.client.tasks.createTask({
      name: "ship",
      plan: [{ id: "build", title: "Build the image" }],
    });
    const { yaml } = await live.client.state.getTaskState({ taskId: task!.id });
    assert.match(yaml, new RegExp(`id: ${task!.id}`));
    assert.match(yaml, /- id: build/);
  });

  test("client.memory stores a knowledge entry and returns it by id", async () => {
    const { knowledge } = await live.client.memory.upsertKnowledge({
      category: KnowledgeCategory.FACT,
      key: "ts-client.deploy-target",
      value: "staging",
    });
    const fetched = await live.client.memory.getKnowledge({ id: knowledge!.id });
    assert.equal(fetched.knowledge?.value, "staging");
  });
});
