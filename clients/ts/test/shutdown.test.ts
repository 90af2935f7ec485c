// The server going away must not crash the client process: grpc.aio sends
// GOAWAY on graceful shutdown, and connect-node once raised an uncaught error
// for a GOAWAY on an idle connection (connect-es #1768).

import assert from "node:assert/strict";
import { after, afterEach, before, beforeEach, describe, test } from "node:test";

import { Code, ConnectError, createTaskmemClient, type TaskmemClient } from "../src/index.js";
import { delay, startServer, type TestServer } from "../test-support/server.js";

describe("the client when the server shuts down", () => {
  const uncaught: unknown[] = [];
  const recordUncaught = (err: unknown) => uncaught.push(err);
  let server: TestServer;
  let client: TaskmemClient;

  before(() => {
    process.on("uncaughtException", recordUncaught);
    process.on("unhandledRejection", recordUncaught);
  });
  after(() => {
    process.off("uncaughtException", recordUncaught);
    process.off("unhandledRejection", recordUncaught);
  });
  beforeEach(async () => {
    uncaught.length = 0;
    server = await startServer();
    client = createTaskmemClient({ baseUrl: server.baseUrl, timeoutMs: 5_000 });
  });
  afterEach(async () => {
    client?.close();
    await server?.dispose();
  });

  test("an idle client survives the server's GOAWAY on SIGTERM and reconnects after a restart", async () => {
    const { task } = await client.tasks.createTask({ name: "before shutdown" });
    assert.equal(await server.stop("SIGTERM"), 0, `the server's graceful exit\n${server.stderr}`);
    await delay(1_500); // GOAWAY and the connection's close reach the idle client
    assert.deepEqual(uncaught, []);

    // With the server gone a call fails cleanly with UNAVAILABLE (ExtractState is
    // not safe to repeat, so the client does not retry it until the deadline).
    await assert.rejects(
      client.state.extractState({ taskId: task!.id }),
      (err: unknown) => err instanceof ConnectError && err.code === Code.Unavailable,
    );

    await server.start(); // the same port and database
    const { task: again } = await client.tasks.getTask({ taskId: task!.id });
    assert.equal(again?.name, "before shutdown");
    assert.deepEqual(uncaught, []);
  });

  test("an idle client survives the server being killed without a GOAWAY", async () => {
    await client.tasks.createTask({ name: "before kill" });
    await server.stop("SIGKILL");
    await delay(1_000);
    await server.start();
    const { tasks } = await client.tasks.listTasks({});
    assert.deepEqual(tasks.map((t) => t.name), ["before kill"]);
    assert.deepEqual(uncaught, []);
  });

  test("a client with a subscription open survives SIGTERM and its subscription resumes", async () => {
    const { task } = await client.tasks.createTask({ name: "watched" });
    const abort = new AbortController();
    const cursors: bigint[] = [];
    const loop = (async () => {
      const options = { signal: abort.signal, initialBackoffMs: 50, maxBackoffMs: 300 };
      for await (const event of client.subscribeEvents({ taskIds: [task!.id] }, options)) {
        cursors.push(event.cursor);
      }
    })();
    while (cursors.length < 1) {
      await delay(20);
    }
    await server.stop("SIGTERM");
    await delay(1_000);
    await server.start();
    await client.tasks.updateTask({ task: { id: task!.id, goal: "after restart" }, updateMask: { paths: ["goal"] } });
    while (cursors.length < 2) {
      await delay(20);
    }
    abort.abort();
    await loop;
    assert.equal(cursors.length, 2);
    assert.ok(cursors[1]! > cursors[0]!);
    assert.deepEqual(uncaught, []);
  });

  test("a call in flight when the client is closed fails with CANCELED and nothing is left uncaught", async () => {
    const { task } = await client.tasks.createTask({ name: "tail" });
    const { action } = await client.tasks.recordAction({ taskId: task!.id, summary: "running" });
    const tail = (async () => {
      for await (const _ of client.tasks.tailActionLog({ actionId: action!.id }, { timeoutMs: 0 })) {
        // no lines
      }
    })();
    await delay(300);
    client.close();
    await assert.rejects(tail, (err: unknown) => err instanceof ConnectError && err.code === Code.Canceled);
    await delay(300);
    assert.deepEqual(uncaught, []);
  });
});
