// TaskmemSaver keeps a LangGraph.js thread in a taskmem task: values come
// back byte for byte, each checkpoint and batch of writes is an event of the
// thread's task, and copyThread forks that task. (LangGraph's own suite runs
// in langgraph-validation.vitest.ts.)

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";

import { EventType } from "../src/index.js";
import { TaskmemSaver } from "../src/langgraph.js";
import { liveServer } from "../test-support/live.js";

/** Every byte value, and text that JSON and UTF-8 must carry unchanged. */
const ALL_BYTES = Uint8Array.from({ length: 256 }, (_, n) => n);
const AWKWARD_TEXT = "nul:\u0000 tab:\t quote:\" backslash:\\ emoji:🦜 bom:\ufeff rtl:\u202e combining:e\u0301";

function checkpointWith(channelValues: Record<string, unknown>): Checkpoint {
  return {
    v: 4,
    id: uuid6(-3),
    ts: new Date().toISOString(),
    channel_values: channelValues,
    channel_versions: Object.fromEntries(Object.keys(channelValues).map((ch) => [ch, 1])),
    versions_seen: {},
  };
}

describe("TaskmemSaver", () => {
  const live = liveServer();
  const saver = (): TaskmemSaver => new TaskmemSaver({ client: live.client });

  test("a checkpoint's values and a pending write's value round-trip exactly, and the server returns the serde's bytes unchanged", async () => {
    const thread = `bytes-${uuid6(-3)}`;
    const values = { blob: ALL_BYTES, text: AWKWARD_TEXT, big: Number.MAX_SAFE_INTEGER, tiny: 5e-324, nested: { list: [null, true, -0.5] } };
    const checkpoint = checkpointWith(values);
    const metadata = { source: "input" as const, step: -1, parents: {}, note: AWKWARD_TEXT };
    const config = await saver().put(
      { configurable: { thread_id: thread } },
      checkpoint,
      metadata,
      checkpoint.channel_versions,
    );
    await saver().putWrites(config, [["blob", ALL_BYTES], ["text", AWKWARD_TEXT]], "writer");

    const tuple = await saver().getTuple(config);
    assert.deepEqual(tuple?.checkpoint, checkpoint);
    assert.deepEqual(tuple?.metadata, metadata);
    assert.deepEqual(tuple?.pendingWrites, [
      ["writer", "blob", ALL_BYTES],
      ["writer", "text", AWKWARD_TEXT],
    ]);

    const stored = await live.client.checkpoints.getCheckpoint({ threadId: thread, checkpointId: checkpoint.id });
    const [type, data] = await saver().serde.dumpsTyped(checkpoint);
    assert.equal(stored.checkpoint?.value?.type, type);
    assert.deepEqual(stored.checkpoint?.value?.data, data);
    const [writeType, writeData] = await saver().serde.dumpsTyped(ALL_BYTES);
    assert.equal(stored.checkpoint?.pendingWrites[0]?.value?.type, writeType);
    assert.deepEqual(stored.checkpoint?.pendingWrites[0]?.value?.data, writeData);
  });

  test("a thread is a task whose events record each checkpoint and batch of writes", async () => {
    const thread = `events-${uuid6(-3)}`;
    const first = checkpointWith({ count: 1 });
    const config = await saver().put({ configurable: { thread_id: thread } }, first, { source: "input", step: -1, parents: {} }, { count: 1 });
    await saver().putWrites(config, [["count", 2]], "step-1");
    const second = { ...checkpointWith({ count: 2 }), channel_versions: { count: 2 } };
    await saver().put(config, second, { source: "loop", step: 0, parents: {} }, { count: 2 });

    const taskId = await saver().taskOf(thread);
    assert.ok(taskId);
    const { task } = await live.client.tasks.getTask({ taskId });
    assert.equal(task?.name, `LangGraph thread ${thread}`);
    const { events } = await live.client.tasks.listEvents({
      taskIds: [taskId],
      types: [EventType.CHECKPOINT_PUT, EventType.CHECKPOINT_WRITES_PUT],
    });
    assert.deepEqual(
      events.map((event) => [event.type, event.payload?.["checkpoint_id"]]),
      [
        [EventType.CHECKPOINT_PUT, first.id],
        [EventType.CHECKPOINT_WRITES_PUT, first.id],
        [EventType.CHECKPOINT_PUT, second.id],
      ],
    );
  });

  test("copyThread forks the source thread's task and the copy resumes from the same checkpoint", async () => {
    const source = `source-${uuid6(-3)}`;
    const target = `target-${uuid6(-3)}`;
    const checkpoint = checkpointWith({ plan: ["draft", "review"] });
    await saver().put({ configurable: { thread_id: source } }, checkpoint, { source: "input", step: -1, parents: {} }, { plan: 1 });

    const forkId = await saver().copyThread(source, target);
    const { task: fork } = await live.client.tasks.getTask({ taskId: forkId });
    assert.equal(fork?.forkedFrom, await saver().taskOf(source));
    const copied = await saver().getTuple({ configurable: { thread_id: target } });
    assert.deepEqual(copied?.checkpoint, checkpoint);
  });

  test("a checkpoint keeps the values it carries over, so it still loads whole after its ancestors are pruned", async () => {
    const thread = `carried-${uuid6(-3)}`;
    const meta = { source: "loop" as const, step: 0, parents: {} };
    const first = checkpointWith({ question: "which database?", count: 1 });
    const config = await saver().put({ configurable: { thread_id: thread } }, first, meta, first.channel_versions);
    const second: Checkpoint = { ...checkpointWith({ question: "which database?", count: 2 }), channel_versions: { question: 1, count: 2 } };
    const latest = await new TaskmemSaver({ client: live.client }).put(config, second, { ...meta, step: 1 }, { count: 2 });

    const { deletedCount } = await live.client.checkpoints.pruneCheckpoints({ threadIds: [thread] });
    assert.equal(deletedCount, 1);
    assert.deepEqual((await saver().getTuple(latest))?.checkpoint.channel_values, { question: "which database?", count: 2 });
  });

  test("put and putWrites without the ids they need are refused before any call", async () => {
    const checkpoint = checkpointWith({});
    await assert.rejects(saver().put({ configurable: {} }, checkpoint, { source: "input", step: -1, parents: {} }, {}), /thread_id/);
    await assert.rejects(saver().putWrites({ configurable: { thread_id: "t" } }, [["c", 1]], "task"), /checkpoint_id/);
  });
});
