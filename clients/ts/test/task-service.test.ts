// TaskService end to end against a live server: a realistic unary flow,
// deadlines, errors with their ErrorInfo reason, auth and namespaces.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import {
  ActionStatus,
  ActionType,
  Code,
  ConnectError,
  createTaskmemClient,
  errorField,
  errorInfo,
  errorReason,
  ErrorInfoSchema,
  ErrorReason,
  PlanItemStatus,
  TaskStatus,
} from "../src/index.js";
import { liveServer } from "../test-support/live.js";
import { startServer, type TestServer } from "../test-support/server.js";

/** Runs fn, expects it to fail, and returns its error as a ConnectError. */
async function failure(fn: () => Promise<unknown>): Promise<ConnectError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof ConnectError, `expected a ConnectError, got ${String(err)}`);
    return err;
  }
  assert.fail("expected the call to fail");
}

describe("TaskService on an open server", () => {
  const live = liveServer();

  test("a task created with a plan is worked through and GetProgress says where it is", async () => {
    const { task, plan } = await live.client.tasks.createTask({
      name: "deploy web",
      goal: "Deploy the web service to staging",
      context: { repo: "acme/web", branch: "main" },
      plan: [
        { id: "build", title: "Build the image" },
        { id: "push", title: "Push the image", dependsOn: ["build"] },
        { id: "rollout", title: "Roll out to staging", dependsOn: ["push"] },
      ],
    });
    assert.ok(task !== undefined && task.id !== "");
    assert.equal(task.status, TaskStatus.PENDING);
    assert.equal(plan?.version, 1);
    assert.deepEqual(plan?.items.map((i) => i.id), ["build", "push", "rollout"]);

    const started = await live.client.tasks.updatePlanItem({
      taskId: task.id,
      itemId: "build",
      status: PlanItemStatus.IN_PROGRESS,
      summary: "building",
    });
    assert.equal(started.item?.status, PlanItemStatus.IN_PROGRESS);

    const { action } = await live.client.tasks.recordAction({
      taskId: task.id,
      planItemId: "build",
      type: ActionType.CLI,
      toolName: "docker",
      summary: "docker build -t web .",
      input: { cmd: "docker build -t web ." },
    });
    assert.ok(action !== undefined && action.id !== "");
    assert.equal(action.status, ActionStatus.RUNNING);
    const appended = await live.client.tasks.appendActionLog({
      actionId: action.id,
      lines: [{ content: "Step 1/5" }, { content: "Step 2/5" }],
    });
    assert.equal(appended.lastSequence - appended.firstSequence, 1n);
    const completed = await live.client.tasks.completeAction({
      actionId: action.id,
      status: ActionStatus.SUCCEEDED,
      output: { image: "web:1" },
    });
    assert.equal(completed.action?.status, ActionStatus.SUCCEEDED);
    await live.client.tasks.updatePlanItem({ taskId: task.id, itemId: "build", status: PlanItemStatus.COMPLETED });
    await live.client.tasks.updatePlanItem({ taskId: task.id, itemId: "push", status: PlanItemStatus.IN_PROGRESS });

    const progress = await live.client.tasks.getProgress({ taskId: task.id });
    assert.equal(progress.planVersion, 1);
    assert.equal(progress.totalItems, 3);
    assert.deepEqual(progress.completed.map((i) => i.id), ["build"]);
    assert.equal(progress.current?.id, "push");
    assert.deepEqual(progress.next.map((i) => i.id), []);
    assert.match(progress.summary, /1\/3/);

    const { actions } = await live.client.tasks.listActions({ taskId: task.id });
    assert.deepEqual(actions.map((a) => a.summary), ["docker build -t web ."]);
  });

  test("a bad field is INVALID_ARGUMENT with reason ERROR_REASON_INVALID_FIELD naming the field", async () => {
    const err = await failure(() => live.client.tasks.createTask({ name: "" }));
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(errorReason(err), ErrorReason.INVALID_FIELD);
    assert.equal(errorInfo(err)?.reason, "ERROR_REASON_INVALID_FIELD");
    assert.equal(errorField(err), "name");
    assert.equal(errorInfo(err)?.domain, "taskmem.dev");
  });

  test("a plan cycle is INVALID_ARGUMENT with reason ERROR_REASON_PLAN_CYCLE", async () => {
    const err = await failure(() =>
      live.client.tasks.createTask({
        name: "cyclic",
        plan: [
          { id: "a", title: "A", dependsOn: ["b"] },
          { id: "b", title: "B", dependsOn: ["a"] },
        ],
      }),
    );
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(errorReason(err), ErrorReason.PLAN_CYCLE);
  });

  test("an unknown task is NOT_FOUND with reason ERROR_REASON_NOT_FOUND", async () => {
    const err = await failure(() => live.client.tasks.getTask({ taskId: "no-such-task" }));
    assert.equal(err.code, Code.NotFound);
    assert.equal(errorReason(err), ErrorReason.NOT_FOUND);
  });

  test("errorReason is UNSPECIFIED for errors that are not from the server", () => {
    assert.equal(errorReason(new Error("boom")), ErrorReason.UNSPECIFIED);
    assert.equal(errorReason(new ConnectError("local", Code.Internal)), ErrorReason.UNSPECIFIED);
    assert.equal(errorReason(undefined), ErrorReason.UNSPECIFIED);
    assert.equal(errorInfo(undefined), undefined);
  });

  test("a reason this client does not know is UNSPECIFIED, its name still in errorInfo", () => {
    const err = new ConnectError("newer server", Code.FailedPrecondition, undefined, [
      { desc: ErrorInfoSchema, value: { reason: "ERROR_REASON_FROM_THE_FUTURE", domain: "taskmem.dev" } },
    ]);
    assert.equal(errorReason(err), ErrorReason.UNSPECIFIED);
    assert.equal(errorInfo(err)?.reason, "ERROR_REASON_FROM_THE_FUTURE");
  });

  test("a call whose deadline expires fails with DEADLINE_EXCEEDED", async () => {
    // A live-only subscription with no events never answers, so its deadline is what ends it (the code says so).
    const err = await failure(async () => {
      for await (const _ of live.client.tasks.subscribeEvents({ afterCursor: -1n }, { timeoutMs: 300 })) {
        assert.fail("no event expected");
      }
    });
    assert.equal(err.code, Code.DeadlineExceeded);
  });

  test("the client's timeoutMs is the default deadline of every call, and a call may lift it", async () => {
    const short = createTaskmemClient({ baseUrl: live.server.baseUrl, timeoutMs: 300 });
    try {
      // Set up through the default client: 300 ms is for the tail, not for writes on a busy machine.
      const { task } = await live.client.tasks.createTask({ name: "tail" });
      const { action } = await live.client.tasks.recordAction({ taskId: task!.id, summary: "long job" });
      // TailActionLog of a running action with no lines waits: the default deadline ends it.
      const err = await failure(async () => {
        for await (const _ of short.tasks.tailActionLog({ actionId: action!.id })) {
          assert.fail("no line expected");
        }
      });
      assert.equal(err.code, Code.DeadlineExceeded);
      // A per-call deadline overrides the default: with none, the tail runs until the action completes.
      const lines: string[] = [];
      const tail = (async () => {
        for await (const res of short.tasks.tailActionLog({ actionId: action!.id }, { timeoutMs: 0 })) {
          lines.push(res.line?.content ?? "");
        }
      })();
      await new Promise((done) => setTimeout(done, 600));
      await live.client.tasks.appendActionLog({ actionId: action!.id, lines: [{ content: "done" }] });
      await live.client.tasks.completeAction({ actionId: action!.id, status: ActionStatus.SUCCEEDED });
      await tail;
      assert.deepEqual(lines, ["done"]);
    } finally {
      short.close();
    }
  });

  test("createTaskmemClient refuses a keepalive interval the server would punish", () => {
    assert.throws(() => createTaskmemClient({ baseUrl: live.server.baseUrl, pingIntervalMs: 500 }), RangeError);
  });
});

describe("TaskService on a server with API keys", () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ apiKeys: ["sekrit:team-a,team-b"] });
  });
  after(async () => {
    await server?.dispose();
  });

  test("a call without a token is UNAUTHENTICATED with reason ERROR_REASON_UNAUTHENTICATED", async () => {
    const client = createTaskmemClient({ baseUrl: server.baseUrl });
    try {
      const err = await failure(() => client.tasks.listTasks({}));
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(errorReason(err), ErrorReason.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });

  test("a call with an unknown token is UNAUTHENTICATED with reason ERROR_REASON_UNAUTHENTICATED", async () => {
    const client = createTaskmemClient({ baseUrl: server.baseUrl, token: "wrong" });
    try {
      const err = await failure(() => client.tasks.createTask({ name: "x" }));
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(errorReason(err), ErrorReason.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });

  test("a subscription without a valid token throws UNAUTHENTICATED instead of reconnecting", async () => {
    const client = createTaskmemClient({ baseUrl: server.baseUrl, token: "wrong" });
    let reconnects = 0;
    try {
      const err = await failure(async () => {
        for await (const _ of client.subscribeEvents({}, { onReconnect: () => reconnects++ })) {
          assert.fail("no event expected");
        }
      });
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(errorReason(err), ErrorReason.UNAUTHENTICATED);
      assert.equal(reconnects, 0);
    } finally {
      client.close();
    }
  });

  test("the token and namespace are sent on every call and namespaces are kept apart", async () => {
    const a = createTaskmemClient({ baseUrl: server.baseUrl, token: "sekrit" }); // the key's first namespace
    const b = createTaskmemClient({ baseUrl: server.baseUrl, token: "sekrit", namespace: "team-b" });
    try {
      const { task } = await a.tasks.createTask({ name: "in team-a" });
      assert.equal((await a.tasks.getTask({ taskId: task!.id })).task?.name, "in team-a");
      const err = await failure(() => b.tasks.getTask({ taskId: task!.id }));
      assert.equal(err.code, Code.NotFound);
      // A call may name another namespace with its own header.
      const seen = await b.tasks.getTask({ taskId: task!.id }, { headers: { "x-taskmem-namespace": "team-a" } });
      assert.equal(seen.task?.id, task!.id);
    } finally {
      a.close();
      b.close();
    }
  });

  test("a namespace the key does not cover is PERMISSION_DENIED with reason ERROR_REASON_NAMESPACE_DENIED", async () => {
    const client = createTaskmemClient({ baseUrl: server.baseUrl, token: "sekrit", namespace: "team-c" });
    try {
      const err = await failure(() => client.tasks.listTasks({}));
      assert.equal(err.code, Code.PermissionDenied);
      assert.equal(errorReason(err), ErrorReason.NAMESPACE_DENIED);
    } finally {
      client.close();
    }
  });
});
