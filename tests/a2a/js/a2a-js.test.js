// @a2a-js/sdk's client against `taskmem a2a`: it creates tasks by message and reads, lists, follows and
// cancels them and the tasks an agent records in taskmem, and sets a task's push config, over JSON-RPC and
// HTTP+JSON. A real taskmem server and `taskmem a2a` run for the suite on free loopback ports;
// taskmem_writer.py writes what the agent would.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..", "..");
// The Python that runs taskmem: TASKMEM_PYTHON, else the repository's .venv (made by `make test`).
const python = process.env["TASKMEM_PYTHON"] ?? join(repoRoot, ".venv", "bin", "python");

/** Starts a Python child; resolves with it and the first match of ready on stdout or stderr. */
function startPython(args, ready) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("TASKMEM_")));
  const child = spawn(python, args, { cwd: repoRoot, env: { ...env, PYTHONUNBUFFERED: "1" } });
  let output = "";
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`not ready after 30 s: ${args.join(" ")}\n${output}`)), 30_000);
    child.once("exit", (code) => fail(new Error(`exited with ${code}: ${args.join(" ")}\n${output}`)));
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on("line", (line) => {
        output += line + "\n";
        const found = ready.exec(line.trim());
        if (found) {
          clearTimeout(timer);
          done({ child, value: found[1] });
        }
      });
    }
  });
}

/** taskmem_writer.py: one JSON request per line, one JSON answer per line, in order. */
class Writer {
  constructor(address) {
    this.child = spawn(python, [join(here, "taskmem_writer.py"), address], { cwd: repoRoot });
    this.waiting = [];
    createInterface({ input: this.child.stdout }).on("line", (line) => this.waiting.shift()(JSON.parse(line)));
  }
  call(request) {
    return new Promise((done) => {
      this.waiting.push(done);
      this.child.stdin.write(JSON.stringify(request) + "\n");
    });
  }
  async create(name) {
    return (await this.call({ op: "create", name })).task_id;
  }
}

/** The next n events of a stream, each within 10 s. */
async function take(iterator, n) {
  const got = [];
  for (let i = 0; i < n; i++) {
    let timer;
    const late = new Promise((_, fail) => {
      timer = setTimeout(() => fail(new Error(`event ${i + 1} of ${n} not in 10 s`)), 10_000);
    });
    got.push(await Promise.race([iterator.next(), late]).finally(() => clearTimeout(timer)));
  }
  return got;
}

const textOf = (message) => message?.parts[0]?.content?.value;

/** A SendMessage request: a user's text, to a new task or (taskId) to an existing one. */
const say = (text, { taskId = "", contextId = "" } = {}) => ({
  message: {
    messageId: randomUUID(), role: Role.ROLE_USER, taskId, contextId,
    parts: [{ content: { $case: "text", value: text } }],
  },
});

const clientOver = (transport) => new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default,
  { preferredTransports: [transport] }));

describe("@a2a-js/sdk client on taskmem a2a", () => {
  const dir = mkdtempSync(join(tmpdir(), "taskmem-a2a-js-"));
  const children = [];
  let writer;
  let url;

  before(async () => {
    const server = await startPython(
      ["-m", "taskmem", "serve", "--listen", "127.0.0.1:0", "--database", join(dir, "t.db")],
      /^taskmem: serving on (\S+)$/);
    children.push(server.child);
    const a2a = await startPython(
      ["-m", "taskmem", "a2a", "--address", server.value, "--listen", "127.0.0.1:0", "--grpc-listen", "off"],
      /^taskmem a2a: serving on (\S+)$/);
    children.push(a2a.child);
    url = a2a.value;
    writer = new Writer(server.value);
    children.push(writer.child);
  });

  after(() => {
    for (const child of children.reverse()) child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  });

  for (const transport of ["JSONRPC", "HTTP+JSON"]) {
    test(`creates a task by message, then reads, lists, follows and cancels it, over ${transport}`, async () => {
      const client = await clientOver(transport).createFromUrl(url);
      const contextId = `ctx-${randomUUID()}`;

      const created = await client.sendMessage(say("Write the release notes\nfrom the changelog", { contextId }));
      assert.equal(created.status.state, TaskState.TASK_STATE_SUBMITTED);
      assert.equal(created.contextId, contextId);
      assert.deepEqual(created.history.map(textOf), ["Write the release notes\nfrom the changelog"]);
      assert.equal(created.history[0].role, Role.ROLE_USER);
      assert.deepEqual(await writer.call({ op: "get", task_id: created.id }),
        { status: "TASK_STATUS_PENDING", name: "Write the release notes" });

      assert.equal((await client.getTask({ id: created.id })).contextId, contextId);
      const listed = await client.listTasks({ contextId });
      assert.deepEqual(listed.tasks.map((t) => t.id), [created.id]);

      const stream = client.resubscribeTask({ id: created.id });
      const [snapshot] = await take(stream, 1);
      assert.equal(snapshot.value.payload.value.id, created.id);
      await writer.call({ op: "status", task_id: created.id, status: "EXECUTING" });
      await writer.call({ op: "message", task_id: created.id, content: "which changelog?" });
      const [working, asked] = await take(stream, 2);
      assert.equal(working.value.payload.value.status.state, TaskState.TASK_STATE_WORKING);
      assert.equal(textOf(asked.value.payload.value.status.message), "which changelog?");

      const answered = await client.sendMessage(say("CHANGES.md", { taskId: created.id, contextId }));
      assert.deepEqual(answered.history.map(textOf), [
        "Write the release notes\nfrom the changelog", "which changelog?", "CHANGES.md"]);
      const [reply] = await take(stream, 1);
      assert.equal(textOf(reply.value.payload.value.status.message), "CHANGES.md");

      const cancelled = await client.cancelTask({ id: created.id });
      assert.equal(cancelled.status.state, TaskState.TASK_STATE_CANCELED);
      const [ended, end] = await take(stream, 2);
      assert.equal(ended.value.payload.value.status.state, TaskState.TASK_STATE_CANCELED);
      assert.equal(end.done, true);
    });
  }

  test("a streamed message creates a task and streams what its agent writes until it ends", async () => {
    const client = await new ClientFactory().createFromUrl(url);

    const stream = client.sendMessageStream(say("index the docs"));
    const [first] = await take(stream, 1);
    assert.equal(first.value.payload.$case, "task");
    const id = first.value.payload.value.id;
    await writer.call({ op: "status", task_id: id, status: "EXECUTING" });
    await writer.call({ op: "status", task_id: id, status: "COMPLETED" });
    const [working, completed, end] = await take(stream, 3);
    assert.equal(working.value.payload.value.status.state, TaskState.TASK_STATE_WORKING);
    assert.equal(completed.value.payload.value.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(end.done, true);
  });

  test("reads a task with its transcript and lists it, over JSON-RPC and HTTP+JSON", async () => {
    const id = await writer.create("deploy");
    await writer.call({ op: "message", task_id: id, content: "built the image" });
    const client = await new ClientFactory().createFromUrl(url);

    const task = await client.getTask({ id });
    assert.equal(task.status.state, TaskState.TASK_STATE_SUBMITTED);
    assert.deepEqual(task.history.map(textOf), ["built the image"]);
    const listed = await client.listTasks({ status: TaskState.TASK_STATE_SUBMITTED });
    assert.ok(listed.tasks.some((t) => t.id === id));

    const rest = await clientOver("HTTP+JSON").createFromUrl(url);
    assert.equal((await rest.getTask({ id })).id, id);
    await assert.rejects(client.getTask({ id: "tsk_000000000000000000000000" }), /not found/i);
  });

  test("follows a task until it ends, and resumes after a cursor", async () => {
    const id = await writer.create("index");
    const client = await new ClientFactory().createFromUrl(url);
    const stream = client.resubscribeTask({ id });
    const [snapshot] = await take(stream, 1);
    assert.equal(snapshot.value.payload.$case, "task");

    await writer.call({ op: "status", task_id: id, status: "EXECUTING" });
    await writer.call({ op: "message", task_id: id, content: "indexed 40 files" });
    const [working, message] = await take(stream, 2);
    assert.equal(working.value.payload.value.status.state, TaskState.TASK_STATE_WORKING);
    assert.equal(textOf(message.value.payload.value.status.message), "indexed 40 files");

    // taskmem's extension: events after the cursor an earlier event carried are replayed first.
    const cursor = String(working.value.payload.value.metadata.taskmem_cursor);
    const resumed = client.resubscribeTask({ id }, { serviceParameters: { "x-taskmem-after-cursor": cursor } });
    const [, replayed] = await take(resumed, 2);
    assert.equal(textOf(replayed.value.payload.value.status.message), "indexed 40 files");
    await resumed.return(undefined);

    await writer.call({ op: "status", task_id: id, status: "COMPLETED" });
    const [completed, end] = await take(stream, 2);
    assert.equal(completed.value.payload.value.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(end.done, true);
  });

  test("cancels a running task", async () => {
    const id = await writer.create("long job");
    await writer.call({ op: "status", task_id: id, status: "EXECUTING" });
    const client = await new ClientFactory().createFromUrl(url);

    const cancelled = await client.cancelTask({ id });

    assert.equal(cancelled.status.state, TaskState.TASK_STATE_CANCELED);
    assert.equal((await writer.call({ op: "get", task_id: id })).status, "TASK_STATUS_CANCELLED");
  });

  test("sets, lists and deletes a task's push config (its callback_url)", async () => {
    const id = await writer.create("report");
    const client = await new ClientFactory().createFromUrl(url);
    const hook = "http://127.0.0.1:9/hook";

    const created = await client.createTaskPushNotificationConfig({ taskId: id, url: hook });
    assert.equal(created.id, id);
    const listed = await client.listTaskPushNotificationConfig({ taskId: id });
    assert.deepEqual(listed.configs.map((c) => c.url), [hook]);
    await client.deleteTaskPushNotificationConfig({ taskId: id, id });
    assert.equal((await client.listTaskPushNotificationConfig({ taskId: id })).configs.length, 0);
  });
});
