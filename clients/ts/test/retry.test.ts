// Which unary calls the client repeats on UNAVAILABLE comes from the contract
// (idempotency_level, request_id); streams resume on the documented codes.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { create, type DescMessage, type DescMethod, type MessageShape } from "@bufbuild/protobuf";
import { Code, ConnectError, type UnaryRequest } from "@connectrpc/connect";

import {
  CreateTaskRequestSchema,
  ExtractStateRequestSchema,
  GetTaskRequestSchema,
  isRetryableStreamError,
  retryInterceptor,
  StateService,
  TaskService,
} from "../src/index.js";
import { repoRoot } from "../test-support/server.js";

const policy = { attempts: 3, initialBackoffMs: 1, maxBackoffMs: 2 };

/** Calls method through the retry interceptor with a server that always answers UNAVAILABLE. */
async function attemptsAgainstADownServer<I extends DescMessage>(
  method: DescMethod,
  schema: I,
  message: MessageShape<I>,
): Promise<MessageShape<I>[]> {
  const sent: MessageShape<I>[] = [];
  const call = retryInterceptor(policy)(async (req) => {
    sent.push(req.message as MessageShape<I>);
    throw new ConnectError("server down", Code.Unavailable);
  });
  const req = {
    stream: false,
    method,
    message,
    signal: new AbortController().signal,
    header: new Headers(),
    contextValues: undefined,
    requestMethod: "POST",
    url: "http://127.0.0.1/",
    service: method.parent,
  } as unknown as UnaryRequest;
  await assert.rejects(call(req), (err: unknown) => ConnectError.from(err).code === Code.Unavailable);
  assert.ok(schema);
  return sent;
}

describe("retries come from the contract", () => {
  test("a read declared NO_SIDE_EFFECTS is retried on UNAVAILABLE", async () => {
    const sent = await attemptsAgainstADownServer(
      TaskService.method.getTask,
      GetTaskRequestSchema,
      create(GetTaskRequestSchema, { taskId: "tsk_x" }),
    );
    assert.equal(sent.length, 3);
  });

  test("a write without a request_id is not retried", async () => {
    const sent = await attemptsAgainstADownServer(
      StateService.method.extractState,
      ExtractStateRequestSchema,
      create(ExtractStateRequestSchema, { taskId: "tsk_x" }),
    );
    assert.equal(sent.length, 1);
  });

  test("a write with a request_id is retried with one filled id, the caller's message untouched", async () => {
    const request = create(CreateTaskRequestSchema, { name: "deploy" });
    const sent = await attemptsAgainstADownServer(TaskService.method.createTask, CreateTaskRequestSchema, request);
    assert.equal(sent.length, 3);
    assert.match(sent[0]!.requestId, /^[0-9a-f]{32}$/);
    assert.ok(sent.every((message) => message.requestId === sent[0]!.requestId));
    assert.equal(request.requestId, "");
  });

  test("streams resume on the codes SubscribeEvents' comment documents, and on no other", () => {
    const documented = documentedResumeCodes();
    assert.ok(documented.size > 0);
    for (let code = Code.Canceled; code <= Code.Unauthenticated; code++) {
      assert.equal(isRetryableStreamError(new ConnectError("x", code)), documented.has(code), Code[code]);
    }
  });
});

/** The codes listed under "Resuming:" in SubscribeEvents' comment, the one list the three clients follow. */
function documentedResumeCodes(): Set<Code> {
  const proto = readFileSync(join(repoRoot, "proto", "taskmem", "v1", "task_service.proto"), "utf8");
  const listed = new Set<Code>();
  for (const line of proto.slice(proto.indexOf("// Resuming:")).split("\n").slice(1)) {
    const match = /^\s*\/\/\s{3}([A-Z_]+)\s{2,}\S/.exec(line);
    if (match === null) {
      if (listed.size > 0) {
        break;
      }
      continue;
    }
    // Code's names are the canonical ones in PascalCase, with CANCELLED spelt Canceled.
    const name = match[1]!.toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
    const code = (Code as unknown as Record<string, Code | undefined>)[name === "Cancelled" ? "Canceled" : name];
    assert.ok(code !== undefined, match[1]);
    listed.add(code);
  }
  return listed;
}
