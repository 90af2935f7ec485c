// The orchestrator example (examples/orchestrator.ts at the repository root)
// runs as written against a live server, so it cannot rot.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { createTaskmemClient, TaskStatus } from "../src/index.js";
import { distDir, startServer, type TestServer } from "../test-support/server.js";

const run = promisify(execFile);
let server: TestServer;

before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.dispose();
});

test("the orchestrator example registers a task, works its plan, waits for a review, follows its events and exits 0", async () => {
  const { stdout } = await run(process.execPath, [join(distDir, "examples", "orchestrator.js")], {
    env: { ...process.env, TASKMEM_ADDRESS: server.address },
    timeout: 60_000,
  });
  assert.match(stdout, /registered with 3 plan items/);
  assert.match(stdout, /\[event 1\] TASK_CREATED/);
  assert.match(stdout, /ACTION_COMPLETED/);
  assert.match(stdout, /WAIT_CREATED sales lead approves the summary/);
  assert.match(stdout, /review RESOLVED: approved by dana/);
  assert.match(stdout, /WAIT_RESOLVED/);
  assert.match(stdout, /-> TASK_STATUS_COMPLETED/);
  assert.match(stdout, /orchestrator: done/);

  // What it left in the record.
  const client = createTaskmemClient({ baseUrl: server.baseUrl });
  try {
    const { tasks } = await client.tasks.listTasks({});
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0]?.status, TaskStatus.COMPLETED);
    const { actions } = await client.tasks.listActions({ taskId: tasks[0]!.id });
    assert.equal(actions.length, 3);
    const progress = await client.tasks.getProgress({ taskId: tasks[0]!.id });
    assert.equal(progress.completed.length, 3);
  } finally {
    client.close();
  }
});
