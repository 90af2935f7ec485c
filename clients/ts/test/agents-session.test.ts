// TaskmemSession is the @openai/agents SDK's memory: the SDK's Runner, with a
// scripted model on loopback, keeps a two-turn conversation in the task's
// transcript across a server restart; getItems with limit, popItem and
// clearSession behave as the Session interface says, and the transcript keeps
// what the session retracts.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";

import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool, type Session } from "@openai/agents";
import { z } from "zod";

import { TaskmemSession } from "../src/agents.js";
import { createTaskmemClient, MessageKind, MessageRole } from "../src/index.js";
import { startScriptedChatModel, type ScriptedChatModel } from "../test-support/scripted-chat-model.js";
import { startServer, type TestServer } from "../test-support/server.js";

setTracingDisabled(true); // nothing leaves the machine

const getWeather = tool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => (city === "Paris" ? "sunny" : "unknown"),
});

const agent = new Agent({ name: "assistant", instructions: "Be brief.", model: "scripted", tools: [getWeather] });

/** The SDK's Runner on the scripted model (Chat Completions at baseURL). */
function runner(baseURL: string): Runner {
  return new Runner({ modelProvider: new OpenAIProvider({ baseURL, apiKey: "test", useResponses: false }) });
}

async function transcript(server: TestServer, taskId: string): Promise<Array<[MessageRole, string]>> {
  const client = createTaskmemClient({ baseUrl: server.baseUrl });
  try {
    const { messages } = await client.tasks.listMessages({ taskId, pageSize: 500, kinds: [MessageKind.TEXT] });
    return messages.map((m) => [m.role, m.content]);
  } finally {
    client.close();
  }
}

describe("TaskmemSession", () => {
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

  test("the Runner keeps two turns in the task across a server restart", async () => {
    const session = await TaskmemSession.forNewTask("weather chat", { baseUrl: server.baseUrl });
    const asSession: Session = session;
    const first = await runner(model.baseUrl).run(agent, "My name is Ada. What's the weather like?", { session: asSession });
    assert.equal(first.finalOutput, "It is sunny in Paris.");
    const taskId = await session.getSessionId();
    const items = (await session.getItems()) as Array<Record<string, unknown>>;
    assert.deepEqual(
      items.map((item) => item["type"] ?? "message"),
      ["message", "function_call", "function_call_result", "message"],
    );
    assert.equal(items[0]?.["content"], "My name is Ada. What's the weather like?");
    session.close();

    await server.restart();

    const again = new TaskmemSession(taskId, { baseUrl: server.baseUrl });
    try {
      const second = await runner(model.baseUrl).run(agent, "What is my name?", { session: again });
      assert.equal(second.finalOutput, "Your name is Ada.");
      // The second turn's request carried the first turn, read back from taskmem.
      const sent = model.requests[model.requests.length - 1]!.messages;
      assert.ok(sent.some((m) => JSON.stringify(m.content ?? "").includes("My name is Ada")));
      assert.ok(sent.some((m) => m.role === "tool" && JSON.stringify(m.content).includes("sunny")));
      assert.equal((await again.getItems()).length, 6);
    } finally {
      again.close();
    }

    assert.deepEqual(await transcript(server, taskId), [
      [MessageRole.USER, "My name is Ada. What's the weather like?"],
      [MessageRole.AGENT, 'calls get_weather({"city":"Paris"})'],
      [MessageRole.TOOL, "sunny"],
      [MessageRole.AGENT, "It is sunny in Paris."],
      [MessageRole.USER, "What is my name?"],
      [MessageRole.AGENT, "Your name is Ada."],
    ]);
  });

  test("limit, popItem and clearSession follow the Session interface and the transcript keeps everything", async () => {
    const session = await TaskmemSession.forNewTask("protocol", { baseUrl: server.baseUrl });
    try {
      assert.deepEqual(await session.getItems(), []);
      assert.equal(await session.popItem(), undefined);
      const items = [0, 1, 2, 3, 4].map((n) => ({ role: "user" as const, content: `m${n}` }));
      await session.addItems(items.slice(0, 3));
      await session.addItems(items.slice(3));
      assert.deepEqual(await session.getItems(), items);
      assert.deepEqual(await session.getItems(2), items.slice(3));
      assert.deepEqual(await session.popItem(), items[4]);
      assert.deepEqual(await session.getItems(), items.slice(0, 4));
      const exact = { type: "function_call" as const, name: "f", arguments: '{"x": 1.0}', callId: "c", providerData: { é: "✓" } };
      await session.addItems([exact]);
      assert.deepEqual(await session.getItems(1), [exact]);
      await session.clearSession();
      assert.deepEqual(await session.getItems(), []);
      assert.equal(await session.popItem(), undefined);
      const said = await transcript(server, session.taskId);
      assert.deepEqual(
        said.map(([, content]) => content),
        ["m0", "m1", "m2", "m3", "m4", 'calls f({"x": 1.0})'],
      );
    } finally {
      session.close();
    }
  });

  test("two sessions are two tasks and do not see each other", async () => {
    const one = await TaskmemSession.forNewTask("one", { baseUrl: server.baseUrl });
    const two = await TaskmemSession.forNewTask("two", { baseUrl: server.baseUrl });
    try {
      await one.addItems([{ role: "user", content: "for one" }]);
      assert.deepEqual(await two.getItems(), []);
      assert.equal((await one.getItems()).length, 1);
    } finally {
      one.close();
      two.close();
    }
  });
});
