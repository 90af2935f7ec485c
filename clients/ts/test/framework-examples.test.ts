// The TypeScript framework examples (examples/langgraph_graph.ts and
// examples/openai_agent.ts) run as written against a live server, the agent
// against a scripted model on loopback, so they cannot rot.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";

import { startScriptedChatModel, type ScriptedChatModel } from "../test-support/scripted-chat-model.js";
import { distDir, startServer, type TestServer } from "../test-support/server.js";

const run = promisify(execFile);
let server: TestServer;
let model: ScriptedChatModel;

before(async () => {
  server = await startServer();
  model = await startScriptedChatModel();
});
after(async () => {
  await model?.close();
  await server?.dispose();
});

async function example(name: string, ...args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [join(distDir, "examples", name), "--address", server.address, ...args], {
    timeout: 120_000,
  });
  return stdout;
}

test("the LangGraph example checkpoints its thread as a task, resumes it from another saver and forks it", async () => {
  const out = await example("langgraph_graph.js");
  assert.match(out, /graph: answer: Draft answer to "Which databa/);
  assert.match(out, /graph: thread example-\w+ is task \S+ \(its web page lists each step\)/);
  assert.match(out, /graph: checkpoint step -1 \(input\)\n(graph: checkpoint step \d \(loop\)\n){4}graph: notes/);
  assert.match(out, /graph: notes: drafted, reviewed: too long, revised, drafted, reviewed: too long, revised\n/);
  assert.match(out, /\(a fork of \S+\): 10 checkpoints, latest found\n/);
  assert.match(out, /graph: done\n$/);
});

test("the Agents SDK example continues its conversation from the task", async () => {
  const out = await example("openai_agent.js", "--base-url", model.baseUrl, "--model", "scripted");
  assert.match(out, /agent: turn 1: It is sunny in Paris\.\n/);
  assert.match(out, /agent: turn 2: Your name is Ada\.\n/);
  assert.match(out, /holds 6 items\n/);
  assert.match(out, /agent: done\n$/);
});
