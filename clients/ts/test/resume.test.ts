// The resume logic of subscribeEvents against a scripted in-memory
// SubscribeEvents (Connect's router transport): which codes it resumes on,
// from which cursor, how it backs off, and that it never delivers twice.
// The live-server behaviour is tested in events.test.ts.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, createRouterTransport } from "@connectrpc/connect";

import { subscribeEvents } from "../src/events.js";
import { withinHangGuard } from "../test-support/server.js";
import { EventSchema, EventType, type Event } from "../src/gen/taskmem/v1/event_pb.js";
import { TaskService } from "../src/gen/taskmem/v1/task_service_pb.js";

/** One scripted call: the cursors it sends, then how it ends (undefined: OK). */
interface Step {
  cursors: number[];
  end?: ConnectError;
}

function scripted(steps: Step[]) {
  const requests: bigint[] = [];
  const transport = createRouterTransport(({ service }) => {
    service(TaskService, {
      async *subscribeEvents(req) {
        requests.push(req.afterCursor);
        const step = steps.shift();
        if (step === undefined) {
          // Out of script: hang until the client goes away.
          await new Promise(() => {});
          return;
        }
        for (const cursor of step.cursors) {
          yield {
            event: create(EventSchema, { cursor: BigInt(cursor), type: EventType.MESSAGE_POSTED, taskId: "t1" }),
          };
        }
        if (step.end !== undefined) {
          throw step.end;
        }
      },
    });
  });
  return { tasks: createClient(TaskService, transport), requests };
}

async function take(events: AsyncIterable<Event>, count: number): Promise<bigint[]> {
  const cursors: bigint[] = [];
  for await (const event of events) {
    cursors.push(event.cursor);
    if (cursors.length === count) {
      break;
    }
  }
  return cursors;
}

const fast = { initialBackoffMs: 1, maxBackoffMs: 4 };

describe("subscribeEvents resume logic", () => {
  for (const code of [Code.Unavailable, Code.ResourceExhausted, Code.Internal, Code.Aborted, Code.Canceled]) {
    test(`a stream ended with ${Code[code]} resumes after the last delivered cursor`, async () => {
      const { tasks, requests } = scripted([
        { cursors: [1, 2], end: new ConnectError("broken", code) },
        { cursors: [3] },
      ]);
      assert.deepEqual(await take(subscribeEvents(tasks, {}, fast), 3), [1n, 2n, 3n]);
      assert.deepEqual(requests, [0n, 2n]);
    });
  }

  test("a stream the server ends cleanly is resumed too", async () => {
    const { tasks, requests } = scripted([{ cursors: [5] }, { cursors: [6] }]);
    assert.deepEqual(await take(subscribeEvents(tasks, { afterCursor: 4 }, fast), 2), [5n, 6n]);
    assert.deepEqual(requests, [4n, 5n]);
  });

  test("events at or below the delivered cursor are never delivered again", async () => {
    const { tasks, requests } = scripted([
      { cursors: [1, 2, 3], end: new ConnectError("gone", Code.Unavailable) },
      { cursors: [2, 3, 4, 4, 5] }, // a server that repeats itself
    ]);
    assert.deepEqual(await take(subscribeEvents(tasks, {}, fast), 5), [1n, 2n, 3n, 4n, 5n]);
    assert.deepEqual(requests, [0n, 3n]);
  });

  test("a broken stream that delivered nothing resumes from the same cursor", async () => {
    const { tasks, requests } = scripted([
      { cursors: [], end: new ConnectError("refused", Code.Unavailable) },
      { cursors: [], end: new ConnectError("refused", Code.Unavailable) },
      { cursors: [8] },
    ]);
    assert.deepEqual(await take(subscribeEvents(tasks, { afterCursor: 7n }, fast), 1), [8n]);
    assert.deepEqual(requests, [7n, 7n, 7n]);
  });

  for (const code of [Code.InvalidArgument, Code.Unauthenticated, Code.PermissionDenied, Code.NotFound]) {
    test(`${Code[code]} is thrown to the caller without reconnecting`, async () => {
      const { tasks, requests } = scripted([{ cursors: [1], end: new ConnectError("no", code) }]);
      const seen: bigint[] = [];
      await assert.rejects(
        (async () => {
          for await (const event of subscribeEvents(tasks, {}, fast)) {
            seen.push(event.cursor);
          }
        })(),
        (err: unknown) => err instanceof ConnectError && err.code === code,
      );
      assert.deepEqual(seen, [1n]);
      assert.equal(requests.length, 1);
    });
  }

  test("the reconnect delay doubles up to the cap and starts again after an event", async () => {
    const unavailable = () => new ConnectError("down", Code.Unavailable);
    const { tasks } = scripted([
      { cursors: [], end: unavailable() },
      { cursors: [], end: unavailable() },
      { cursors: [], end: unavailable() },
      { cursors: [], end: unavailable() },
      { cursors: [1], end: unavailable() },
      { cursors: [2] },
    ]);
    const delays: number[] = [];
    const options = { initialBackoffMs: 10, maxBackoffMs: 40, onReconnect: (_: ConnectError, ms: number) => delays.push(ms) };
    assert.deepEqual(await take(subscribeEvents(tasks, {}, options), 2), [1n, 2n]);
    // Each delay is jittered into [d/2, d]: d = 10, 20, 40, 40, then 10 again after the event.
    const bounds = [10, 20, 40, 40, 10];
    assert.equal(delays.length, bounds.length);
    delays.forEach((ms, i) => {
      assert.ok(ms >= bounds[i]! / 2 && ms <= bounds[i]!, `delay ${i} = ${ms}, expected within [${bounds[i]! / 2}, ${bounds[i]}]`);
    });
  });

  test("an abort while waiting to reconnect ends the loop quietly", async () => {
    const { tasks, requests } = scripted([{ cursors: [1], end: new ConnectError("down", Code.Unavailable) }]);
    const abort = new AbortController();
    const seen: bigint[] = [];
    const loop = (async () => {
      for await (const event of subscribeEvents(tasks, {}, { signal: abort.signal, initialBackoffMs: 600_000 })) {
        seen.push(event.cursor);
      }
    })();
    await new Promise((done) => setTimeout(done, 100));
    abort.abort();
    // The backoff is at least 300 s: a loop that ends within the 30 s guard was ended by the abort.
    await withinHangGuard(loop, "the loop did not end after the abort");
    assert.deepEqual(seen, [1n]);
    assert.equal(requests.length, 1);
  });
});
