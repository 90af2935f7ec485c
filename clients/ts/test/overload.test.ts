// An overloaded live server refuses with UNAVAILABLE (ErrorReason.OVERLOADED) and a retry hint; the
// client retries after at least the pause the server asked for.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { ConnectError, Code } from "@connectrpc/connect";

import {
  createTaskmemClient,
  errorReason,
  ErrorReason,
  MessageRole,
  retryDelayMs,
  type RetryPolicy,
} from "../src/index.js";
import { startServer, type TestServer } from "../test-support/server.js";

describe("overload", () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { TASKMEM_MAX_IN_FLIGHT_CALLS: "1", TASKMEM_OVERLOAD_RETRY_AFTER_MS: "300" } });
  });
  after(async () => {
    await server.dispose();
  });

  /** Posts n messages at once; each call's outcome and duration in ms. */
  async function postConcurrently(retry: RetryPolicy, n: number): Promise<{ error?: unknown; ms: number }[]> {
    const client = createTaskmemClient({ baseUrl: server.baseUrl, timeoutMs: 30_000, retry });
    try {
      const { task } = await client.tasks.createTask({ name: "busy" });
      return await Promise.all(
        Array.from({ length: n }, async () => {
          const started = performance.now();
          try {
            await client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: "busy" });
            return { ms: performance.now() - started };
          } catch (error) {
            return { error, ms: performance.now() - started };
          }
        }),
      );
    } finally {
      client.close();
    }
  }

  test("a refused call is UNAVAILABLE with ErrorReason.OVERLOADED and the server's retry hint", async () => {
    const outcomes = await postConcurrently({ attempts: 1, initialBackoffMs: 10, maxBackoffMs: 20 }, 30);
    const refused = outcomes.filter((o) => o.error !== undefined).map((o) => o.error);
    assert.ok(refused.length > 0, "30 calls at once against max_in_flight_calls 1: none was refused");
    for (const error of refused) {
      assert.equal(ConnectError.from(error).code, Code.Unavailable);
      assert.equal(errorReason(error), ErrorReason.OVERLOADED);
      assert.equal(retryDelayMs(error), 300);
    }
  });

  test("the client retries refused calls after the server's hint until they succeed", async () => {
    const outcomes = await postConcurrently({ attempts: 30, initialBackoffMs: 10, maxBackoffMs: 20 }, 30);
    assert.deepEqual(outcomes.filter((o) => o.error !== undefined), []);
    // One refused at least once waited the server's 300 ms, not the client's own 10-20 ms backoff.
    assert.ok(Math.max(...outcomes.map((o) => o.ms)) >= 300);
  });

  test("after refusals the client holds calls past its limit instead of sending them", async () => {
    const narrow = await startServer({ env: { TASKMEM_MAX_IN_FLIGHT_CALLS: "4", TASKMEM_OVERLOAD_RETRY_AFTER_MS: "20" } });
    /** Refused calls in the last three of five bursts of 40 from one client that does not retry. */
    async function refusedOnceLearned(limitCallsInFlight: boolean): Promise<number> {
      const client = createTaskmemClient({
        baseUrl: narrow.baseUrl,
        timeoutMs: 30_000,
        retry: { attempts: 1, initialBackoffMs: 10, maxBackoffMs: 20, limitCallsInFlight },
      });
      try {
        const { task } = await client.tasks.createTask({ name: "bursts" });
        let refused = 0;
        for (let burst = 0; burst < 5; burst++) {
          const outcomes = await Promise.allSettled(
            Array.from({ length: 40 }, () =>
              client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: "burst" }),
            ),
          );
          const rejected = outcomes.filter((o) => o.status === "rejected").map((o) => o.reason);
          for (const error of rejected) {
            assert.equal(errorReason(error), ErrorReason.OVERLOADED);
          }
          refused += burst >= 2 ? rejected.length : 0;
        }
        return refused;
      } finally {
        client.close();
      }
    }
    try {
      const unlimited = await refusedOnceLearned(false);
      const limited = await refusedOnceLearned(true);
      // How many the server refuses without the limit depends on the machine's load; with the limit learned,
      // the client sends little beyond it whatever the load: at most 8 of each burst of 40 are refused.
      assert.ok(unlimited >= 30, `without the limit, bursts of 40 against max_in_flight_calls 4: ${unlimited} refused`);
      assert.ok(limited <= 24 && limited < unlimited, `with the limit ${limited} refused, without ${unlimited}`);
    } finally {
      await narrow.dispose();
    }
  });
});
