// A small OpenAI Agents SDK (@openai/agents) agent whose conversation lives in
// a taskmem task.
//
// The one-line change from the SDK's MemorySession is
// `session: new TaskmemSession(taskId, { baseUrl })`: every turn's items (user
// input, tool calls, tool output, answers) are messages of the task's
// transcript, so the task's record, web page, search and retention see the
// conversation, and a later run (another process, after a restart) continues it.
//
//     make run                                                   # in another terminal
//     cd clients/ts && npm run build && node dist/examples/openai_agent.js \
//         --base-url http://127.0.0.1:11434/v1 --model llama3.2 [--address 127.0.0.1:50051]
//
// Any OpenAI-compatible chat-completions endpoint serves (Ollama, vLLM,
// llama.cpp, a hosted API; the key from OPENAI_API_KEY). TASKMEM_API_KEY is
// sent as the token when set.

import { parseArgs } from "node:util";

import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from "@openai/agents";
import { TaskmemSession } from "@taskmem/client/agents";
import { z } from "zod";

const getWeather = tool({
  name: "get_weather",
  description: "The weather in a city.",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => (city === "Paris" ? "sunny" : "cloudy"),
});

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      address: { type: "string", default: "127.0.0.1:50051" },
      "base-url": { type: "string" },
      model: { type: "string", default: "llama3.2" },
    },
  });
  if (values["base-url"] === undefined) throw new Error("--base-url is required (an OpenAI-compatible endpoint)");
  const baseUrl = /^https?:\/\//.test(values.address) ? values.address : `http://${values.address}`;
  const token = process.env["TASKMEM_API_KEY"];
  setTracingDisabled(true);
  const runner = new Runner({
    modelProvider: new OpenAIProvider({
      baseURL: values["base-url"],
      apiKey: process.env["OPENAI_API_KEY"] ?? "unused",
      useResponses: false,
    }),
  });
  const agent = new Agent({ name: "assistant", instructions: "Answer briefly.", model: values.model, tools: [getWeather] });

  const session = await TaskmemSession.forNewTask("weather chat", { baseUrl, token });
  const first = await runner.run(agent, "My name is Ada. What's the weather like in Paris?", { session });
  console.log(`agent: turn 1: ${first.finalOutput}`);
  session.close();
  // Another session object (another process would do the same) continues the task's conversation.
  const again = new TaskmemSession(session.taskId, { baseUrl, token });
  const second = await runner.run(agent, "What is my name?", { session: again });
  console.log(`agent: turn 2: ${second.finalOutput}`);
  console.log(`agent: task ${again.taskId} holds ${(await again.getItems()).length} items`);
  again.close();
  console.log("agent: done");
}

await main();
