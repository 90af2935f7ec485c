// Past capacity the server refuses with UNAVAILABLE (ErrorReason.OVERLOADED) and a retry hint; the client
// retries after at least the pause the server asked for and, once refused, holds calls past its limit of
// calls in flight.
//
// The client is judged against an in-test server that refuses on cue as the real server does
// (server/taskmem/api/admission.py), never by counting how many calls a real server refuses: that depends
// on how fast the machine is at the moment. The real server's refusal is made certain by holding its one
// slot with a QueryTask that waits at a held model.

import assert from "node:assert/strict";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createHttp2Server, type Http2Server } from "node:http2";
import type { AddressInfo } from "node:net";
import { describe, test } from "node:test";

import { create } from "@bufbuild/protobuf";
import { ConnectError, Code } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";

import {
  createTaskmemClient,
  errorReason,
  ErrorInfoSchema,
  ErrorReason,
  MessageRole,
  retryDelayMs,
  type RetryPolicy,
  type TaskmemClient,
} from "../src/index.js";
import { RetryInfoSchema } from "../src/gen/google/rpc/error_details_pb.js";
import { PostMessageResponseSchema, TaskService } from "../src/gen/taskmem/v1/task_service_pb.js";
import { HANG_GUARD_MS, startServer } from "../test-support/server.js";

/** Only keeps a broken client from hanging the suite; never what a test judges. */

/** One postMessage at the cue server, waiting for the test to answer it. */
interface HeldCall {
  at: number; // performance.now() when it reached the server
  succeed(): void;
  refuse(hintMs: number): void;
}

/** The real server's refusal past capacity: UNAVAILABLE, ErrorInfo OVERLOADED, the hint as RetryInfo and trailer. */
function overloaded(hintMs: number): ConnectError {
  return new ConnectError(
    `the server is at capacity and did not start this call; retry in ${hintMs} ms`,
    Code.Unavailable,
    new Headers({ "grpc-retry-pushback-ms": String(hintMs) }),
    [
      { desc: ErrorInfoSchema, value: { reason: "ERROR_REASON_OVERLOADED", domain: "taskmem.dev" } },
      {
        desc: RetryInfoSchema,
        value: { retryDelay: { seconds: BigInt(Math.floor(hintMs / 1000)), nanos: (hintMs % 1000) * 1e6 } },
      },
    ],
  );
}

/** An in-test TaskService whose postMessage calls wait at the server until the test answers each. */
class CueServer {
  private readonly arrived: HeldCall[] = [];
  private readonly waiters: ((call: HeldCall) => void)[] = [];
  private server: Http2Server | undefined;
  baseUrl = "";

  async start(): Promise<this> {
    const handler = connectNodeAdapter({
      routes: (router) =>
        router.service(TaskService, {
          postMessage: () =>
            new Promise((resolve, reject) => {
              this.arrive({
                at: performance.now(),
                succeed: () => resolve(create(PostMessageResponseSchema)),
                refuse: (hintMs) => reject(overloaded(hintMs)),
              });
            }),
        }),
    });
    const server = createHttp2Server(handler);
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return this;
  }

  private arrive(call: HeldCall): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.arrived.push(call);
    } else {
      waiter(call);
    }
  }

  /** The next call to reach the server. */
  next(): Promise<HeldCall> {
    const call = this.arrived.shift();
    if (call !== undefined) {
      return Promise.resolve(call);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no call reached the server within the hang guard")), HANG_GUARD_MS);
      this.waiters.push((held) => {
        clearTimeout(timer);
        resolve(held);
      });
    });
  }

  /** No further call has reached the server. A held call gives no sign that it is held, so this looks after
   * a pause: on a busy machine a call sent wrongly may be missed, never a right one failed. */
  async noneSent(why: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(this.arrived.length, 0, `${this.arrived.length} more calls reached the server: ${why}`);
  }

  client(retry: RetryPolicy): TaskmemClient {
    return createTaskmemClient({ baseUrl: this.baseUrl, timeoutMs: 60_000, retry });
  }

  async close(): Promise<void> {
    const server = this.server;
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  }
}

function post(client: TaskmemClient): Promise<unknown> {
  return client.tasks.postMessage({ taskId: "task", role: MessageRole.AGENT, content: "busy" });
}

async function withCueServer(body: (server: CueServer) => Promise<void>): Promise<void> {
  const server = await new CueServer().start();
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

async function refusedOnce(server: CueServer, client: TaskmemClient): Promise<void> {
  const refused = post(client);
  (await server.next()).refuse(300);
  await assert.rejects(refused, (error) => {
    assert.equal(ConnectError.from(error).code, Code.Unavailable);
    assert.equal(errorReason(error), ErrorReason.OVERLOADED);
    assert.equal(retryDelayMs(error), 300);
    return true;
  });
}

describe("overload", () => {
  test("after a refusal the client holds calls past its limit and lets them go as the limit grows", async () => {
    await withCueServer(async (server) => {
      const client = server.client({ attempts: 1, initialBackoffMs: 10, maxBackoffMs: 20 });
      try {
        await refusedOnce(server, client); // the limit halves to its floor: one call in flight
        const calls = [post(client), post(client), post(client), post(client)];
        const first = await server.next();
        await server.noneSent("with a limit of one call after the refusal, three should wait in the client");
        first.succeed(); // one success grows the limit to two: two held calls go, the last still waits
        const second = await server.next();
        const third = await server.next();
        await server.noneSent("with a limit of two calls, the fourth should wait in the client");
        second.succeed(); // past two: the last goes
        const fourth = await server.next();
        third.succeed();
        fourth.succeed();
        await Promise.all(calls);
      } finally {
        client.close();
      }
    });
  });

  test("without the limit the client sends every call even after a refusal", async () => {
    await withCueServer(async (server) => {
      const client = server.client({ attempts: 1, initialBackoffMs: 10, maxBackoffMs: 20, limitCallsInFlight: false });
      try {
        await refusedOnce(server, client);
        const calls = [post(client), post(client), post(client), post(client)];
        const held = [await server.next(), await server.next(), await server.next(), await server.next()];
        held.forEach((call) => call.succeed()); // all four were at the server at once
        await Promise.all(calls);
      } finally {
        client.close();
      }
    });
  });

  test("a refused call is retried no sooner than the server's hint", async () => {
    await withCueServer(async (server) => {
      // The client's own backoff is 1-2 ms; the server asks for 300 ms.
      const client = server.client({ attempts: 3, initialBackoffMs: 2, maxBackoffMs: 2 });
      try {
        const call = post(client);
        (await server.next()).refuse(300);
        const refusedAt = performance.now(); // before the client can have read the refusal
        const retry = await server.next();
        retry.succeed();
        await call;
        // A lower bound only (a busy machine makes the retry later, never sooner); the slack is for timers
        // that fire a fraction of a millisecond early by performance.now().
        assert.ok(retry.at - refusedAt >= 290, `the retry came ${retry.at - refusedAt} ms after the refusal`);
      } finally {
        client.close();
      }
    });
  });

  test("the real server past capacity refuses with UNAVAILABLE, ErrorReason.OVERLOADED and its retry hint", async () => {
    let asked: () => void = () => {};
    const reachedModel = new Promise<void>((resolve) => (asked = resolve));
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    // An OpenAI-compatible model that answers only once released: a QueryTask asking it holds the server's slot.
    const model: HttpServer = createHttpServer((request, response) => {
      request.resume();
      asked();
      void released.then(() => {
        response.setHeader("Content-Type", "application/json");
        response.end(JSON.stringify({ choices: [{ message: { role: "assistant", content: "Deploy next." } }] }));
      });
    });
    await new Promise<void>((resolve) => model.listen(0, "127.0.0.1", resolve));
    const modelUrl = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1`;
    const server = await startServer({
      env: {
        TASKMEM_MAX_IN_FLIGHT_CALLS: "1",
        TASKMEM_OVERLOAD_RETRY_AFTER_MS: "300",
        TASKMEM_LLM_BASE_URL: modelUrl,
        TASKMEM_LLM_MODEL: "scripted",
        TASKMEM_LLM_RETRIES: "0",
      },
    });
    const client = createTaskmemClient({
      baseUrl: server.baseUrl,
      timeoutMs: 60_000,
      retry: { attempts: 1, initialBackoffMs: 10, maxBackoffMs: 20 },
    });
    try {
      const { task } = await client.tasks.createTask({ name: "busy" });
      const query = client.state.queryTask({ taskId: task!.id, question: "what next?" });
      let guard: NodeJS.Timeout | undefined;
      await Promise.race([
        reachedModel,
        new Promise((_, reject) => {
          guard = setTimeout(() => reject(new Error("QueryTask never reached the model")), HANG_GUARD_MS);
        }),
      ]);
      clearTimeout(guard);
      await assert.rejects(
        client.tasks.postMessage({ taskId: task!.id, role: MessageRole.AGENT, content: "busy" }),
        (error) => {
          assert.equal(ConnectError.from(error).code, Code.Unavailable);
          assert.equal(errorReason(error), ErrorReason.OVERLOADED);
          assert.equal(ConnectError.from(error).metadata.get("grpc-retry-pushback-ms"), "300");
          const delay = ConnectError.from(error).findDetails(RetryInfoSchema)[0]?.retryDelay;
          assert.deepEqual([Number(delay?.seconds), delay?.nanos], [0, 300_000_000]);
          return true;
        },
      );
      release();
      assert.equal((await query).answer, "Deploy next.");
    } finally {
      release();
      client.close();
      await server.dispose();
      model.closeAllConnections();
      await new Promise<void>((resolve) => model.close(() => resolve()));
    }
  });
});
