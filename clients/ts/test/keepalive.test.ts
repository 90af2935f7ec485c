// Keepalive PINGs against grpc C-core's ping policy: the server allows a
// client PING every 10 s without data (grpc.http2.min_recv_ping_interval_without_data_ms)
// and answers more frequent ones with GOAWAY "too_many_pings" (grpc/grpc#9902).

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";

import { createTaskmemClient, MIN_PING_INTERVAL_MS, TaskService, type Event } from "../src/index.js";
import { delay, HANG_GUARD_MS, startServer, type TestServer } from "../test-support/server.js";

describe("keepalive pings", () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server?.dispose();
  });

  test("a quiet subscription pinged at the shortest allowed interval stays up past two pings", async () => {
    const client = createTaskmemClient({ baseUrl: server.baseUrl, pingIntervalMs: MIN_PING_INTERVAL_MS });
    const abort = new AbortController();
    const received: Event[] = [];
    const reconnects: ConnectError[] = [];
    const loop = (async () => {
      const options = { signal: abort.signal, onReconnect: (err: ConnectError) => reconnects.push(err) };
      for await (const event of client.subscribeEvents({ afterCursor: -1 }, options)) {
        received.push(event);
      }
    })();
    try {
      await delay(2.5 * MIN_PING_INTERVAL_MS); // two PINGs go out on the quiet stream
      const { task } = await client.tasks.createTask({ name: "after the pings" });
      while (received.length < 1) {
        await delay(20);
      }
      assert.equal(received[0]?.taskId, task!.id);
      assert.deepEqual(reconnects.map((e) => e.message), [], "the stream was never broken");
    } finally {
      abort.abort();
      await loop;
      client.close();
    }
  });

  test("a transport pinging every 250 ms is cut off with too_many_pings (why the client refuses < 1 s)", async () => {
    // Connect-ES directly, bypassing createTaskmemClient's floor, to show the hazard is real.
    const tasks = createClient(TaskService, createGrpcTransport({ baseUrl: server.baseUrl, pingIntervalMs: 250 }));
    await assert.rejects(
      (async () => {
        for await (const _ of tasks.subscribeEvents({ afterCursor: -1n }, { timeoutMs: HANG_GUARD_MS })) {
          // no events
        }
      })(),
      (err: unknown) => {
        assert.ok(err instanceof ConnectError);
        assert.notEqual(err.code, Code.DeadlineExceeded, "expected the server to cut the connection first");
        // HTTP/2 error code 11 is ENHANCE_YOUR_CALM, C-core's answer to too many pings.
        assert.match(err.message, /error code 11|ENHANCE_YOUR_CALM|too_many_pings/);
        return true;
      },
    );
  });
});
