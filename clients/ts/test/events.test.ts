// subscribeEvents against a live server: abort, early exit, resuming after a
// server restart and after the server drops a slow subscriber.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import {
  Code,
  ConnectError,
  errorReason,
  ErrorReason,
  EventType,
  MessageRole,
  type Event,
} from "../src/index.js";
import { liveServer } from "../test-support/live.js";
import { delay, withinHangGuard } from "../test-support/server.js";

/** Collects events from an iterable in the background until `count` arrived or the signal aborts. */
function collect(events: AsyncIterable<Event>, count: number): { events: Event[]; done: Promise<void> } {
  const seen: Event[] = [];
  const done = (async () => {
    for await (const event of events) {
      seen.push(event);
      if (seen.length >= count) {
        return;
      }
    }
  })();
  return { events: seen, done };
}

/** Resolves once cond() holds, polling; fails after timeoutMs. */
async function until(cond: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) {
      assert.fail(`timed out waiting for ${what}`);
    }
    await delay(20);
  }
}

function assertExactlyOnceInOrder(events: Event[]): void {
  const cursors = events.map((e) => e.cursor);
  for (let i = 1; i < cursors.length; i++) {
    assert.ok(cursors[i]! > cursors[i - 1]!, `cursor ${cursors[i]} after ${cursors[i - 1]}: out of order or repeated`);
  }
}

describe("subscribeEvents", () => {
  const live = liveServer();

  test("replays a task's stored events in cursor order, then streams new ones live", async () => {
    const { task } = await live.client.tasks.createTask({ name: "replay", plan: [{ id: "a", title: "A" }] });
    const abort = new AbortController();
    const sub = collect(live.client.subscribeEvents({ taskIds: [task!.id] }, { signal: abort.signal }), 3);
    await until(() => sub.events.length === 2, "the replayed events");
    assert.deepEqual(
      sub.events.map((e) => e.type),
      [EventType.TASK_CREATED, EventType.PLAN_REPLACED],
    );
    await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.USER, content: "hello" });
    await sub.done;
    assert.equal(sub.events[2]?.type, EventType.MESSAGE_POSTED);
    assert.equal(sub.events[2]?.taskId, task!.id);
    assertExactlyOnceInOrder(sub.events);
    abort.abort();
  });

  test("an abort while waiting for events ends the loop quietly and promptly", async () => {
    const { task } = await live.client.tasks.createTask({ name: "quiet" });
    const abort = new AbortController();
    const received: Event[] = [];
    const loop = (async () => {
      for await (const event of live.client.subscribeEvents({ taskIds: [task!.id] }, { signal: abort.signal })) {
        received.push(event);
      }
    })();
    await until(() => received.length === 1, "the replayed TASK_CREATED");
    await delay(300); // the stream is now waiting for live events
    abort.abort();
    // Resolves (the caller's own abort is not an error); the guard only keeps a loop that ignores it from hanging.
    await withinHangGuard(loop, "the loop did not end after the abort");
    assert.equal(received.length, 1);
  });

  test("a signal aborted before the first call yields nothing and does not throw", async () => {
    const abort = new AbortController();
    abort.abort();
    for await (const _ of live.client.subscribeEvents({}, { signal: abort.signal })) {
      assert.fail("no event expected");
    }
  });

  test("breaking out of the loop ends the call", async () => {
    await live.client.tasks.createTask({ name: "one" });
    await live.client.tasks.createTask({ name: "two" });
    let count = 0;
    for await (const _ of live.client.subscribeEvents({})) {
      if (++count === 1) {
        break;
      }
    }
    assert.equal(count, 1);
  });

  test("afterCursor resumes after the given event without repeating it", async () => {
    const { task } = await live.client.tasks.createTask({ name: "resume", plan: [{ id: "a", title: "A" }] });
    await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.USER, content: "m" });
    const { events: all } = await live.client.tasks.listEvents({ taskIds: [task!.id] });
    assert.equal(all.length, 3);
    const abort = new AbortController();
    const sub = collect(
      live.client.subscribeEvents({ taskIds: [task!.id], afterCursor: all[0]!.cursor }, { signal: abort.signal }),
      2,
    );
    await sub.done;
    abort.abort();
    assert.deepEqual(
      sub.events.map((e) => e.cursor),
      all.slice(1).map((e) => e.cursor),
    );
  });

  test("an invalid filter is thrown as INVALID_ARGUMENT, not retried", async () => {
    let reconnects = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of live.client.subscribeEvents({ afterCursor: -2 }, { onReconnect: () => reconnects++ })) {
          assert.fail("no event expected");
        }
      })(),
      (err: unknown) => err instanceof ConnectError && err.code === Code.InvalidArgument,
    );
    assert.equal(reconnects, 0);
  });
});

describe("subscribeEvents across a server restart", () => {
  const live = liveServer();

  test("events before and after a restart arrive exactly once, in cursor order", async () => {
    const { task } = await live.client.tasks.createTask({ name: "survivor", plan: [{ id: "a", title: "A" }] });
    for (let i = 0; i < 5; i++) {
      await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: `before ${i}` });
    }
    const abort = new AbortController();
    const errors: ConnectError[] = [];
    const sub = collect(
      live.client.subscribeEvents(
        { taskIds: [task!.id] },
        { signal: abort.signal, initialBackoffMs: 50, maxBackoffMs: 500, onReconnect: (err) => errors.push(err) },
      ),
      2 + 5 + 3 + 5,
    );
    await until(() => sub.events.length === 7, "the events before the restart");

    await live.server.stop(); // SIGTERM: the server ends the stream (UNAVAILABLE) and exits
    await live.server.start(); // the same port and database
    // Written right after the restart: the subscriber replays these from the database or
    // gets them live, depending on when it reconnects; either way once each.
    for (let i = 0; i < 3; i++) {
      await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: `after ${i}` });
    }
    await until(() => errors.length > 0 && sub.events.length >= 10, "the reconnect");
    for (let i = 3; i < 8; i++) {
      await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: `after ${i}` });
    }
    await sub.done;
    abort.abort();

    assertExactlyOnceInOrder(sub.events);
    const { events: stored } = await live.client.tasks.listEvents({ taskIds: [task!.id], pageSize: 100 });
    assert.deepEqual(
      sub.events.map((e) => e.cursor),
      stored.map((e) => e.cursor),
    );
    // The server ends the stream on shutdown with UNAVAILABLE, reason SHUTTING_DOWN; then
    // connection refused (UNAVAILABLE) until it is back.
    assert.equal(errors[0]?.code, Code.Unavailable);
    assert.equal(errorReason(errors[0]), ErrorReason.SHUTTING_DOWN);
    assert.ok(
      errors.every((e) => [Code.Unavailable, Code.Internal, Code.Canceled].includes(e.code)),
      `reconnected after: ${errors.map((e) => Code[e.code]).join(", ")}`,
    );
  });
});

describe("subscribeEvents with a slow reader", () => {
  // The server drops the live queue of a subscriber 4 events behind and replays the gap
  // from its database (the contract also allows it to end the stream with
  // RESOURCE_EXHAUSTED; the resume after that is tested with a scripted server).
  const live = liveServer({ env: { TASKMEM_SUBSCRIBER_QUEUE_SIZE: "4" } });

  test("a subscriber that stops reading while many events commit still sees every event once, in order", async () => {
    const { task } = await live.client.tasks.createTask({ name: "firehose" });
    const abort = new AbortController();
    const errors: ConnectError[] = [];
    const events = live.client.subscribeEvents(
      { taskIds: [task!.id] },
      { signal: abort.signal, initialBackoffMs: 20, onReconnect: (err) => errors.push(err) },
    )[Symbol.asyncIterator]();
    const first = await events.next(); // the stream is live now
    assert.equal(first.value?.type, EventType.TASK_CREATED);
    // Big messages fill the HTTP/2 windows quickly while nobody reads.
    const total = 150;
    const content = "x".repeat(20_000);
    for (let i = 0; i < total; i++) {
      await live.client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: `${i} ${content}` });
    }
    const received: Event[] = [first.value!];
    while (received.length < total + 1) {
      const next = await events.next();
      assert.ok(!next.done);
      received.push(next.value);
    }
    abort.abort();
    await events.return?.();
    assertExactlyOnceInOrder(received);
    assert.ok(
      errors.every((e) => e.code === Code.ResourceExhausted),
      `reconnected after: ${errors.map((e) => Code[e.code]).join(", ")}`,
    );
  });
});
