// A unary call of each service besides TaskService, through the typed clients
// createTaskmemClient returns, against a live server.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { createTaskmemClient, KnowledgeCategory, WaitStatus, type TaskmemClient } from "../src/index.js";
import { startServer, type TestServer } from "../test-support/server.js";

describe("every service has a typed client", () => {
  let server: TestServer;
  let client: TaskmemClient;

  before(async () => {
    server = await startServer();
    client = createTaskmemClient({ baseUrl: server.baseUrl, timeoutMs: 10_000 });
  });
  after(async () => {
    client?.close();
    await server?.dispose();
  });

  test("client.waits creates an external wait and resolves it", async () => {
    const { task } = await client.tasks.createTask({ name: "await approval" });
    const { wait } = await client.waits.createWait({
      taskId: task!.id,
      criteria: "release approved",
      target: { kind: { case: "external", value: { resolver: "release manager" } } },
    });
    const resolved = await client.waits.resolveWait({ waitId: wait!.id, result: "approved" });
    assert.equal(resolved.wait?.status, WaitStatus.RESOLVED);
  });

  test("client.state renders a task's state with its plan as YAML", async () => {
    const { task } = await client.tasks.createTask({
      name: "ship",
      plan: [{ id: "build", title: "Build the image" }],
    });
    const { yaml } = await client.state.getTaskState({ taskId: task!.id });
    assert.match(yaml, new RegExp(`id: ${task!.id}`));
    assert.match(yaml, /- id: build/);
  });

  test("client.memory stores a knowledge entry and returns it by id", async () => {
    const { knowledge } = await client.memory.upsertKnowledge({
      category: KnowledgeCategory.FACT,
      key: "ts-client.deploy-target",
      value: "staging",
    });
    const fetched = await client.memory.getKnowledge({ id: knowledge!.id });
    assert.equal(fetched.knowledge?.value, "staging");
  });
});
