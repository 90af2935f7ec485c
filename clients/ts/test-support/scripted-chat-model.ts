// A scripted OpenAI-compatible chat-completions endpoint on loopback for the
// Agents SDK (the same script as tests/frameworks/scripted_chat_model.py): it
// calls the weather tool once for a weather question, then answers from the
// conversation it is sent, so a test sees what history the agent was given.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export type ChatMessage = { role: string; content?: unknown; tool_calls?: unknown };
export interface ChatRequest {
  messages: ChatMessage[];
}

function completion(message: Record<string, unknown>, finish: string): Record<string, unknown> {
  return {
    id: "chatcmpl-scripted",
    object: "chat.completion",
    created: 0,
    model: "scripted",
    choices: [{ index: 0, message, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? "").join(" ");
  return "";
}

export function answer(body: ChatRequest): Record<string, unknown> {
  const last = body.messages[body.messages.length - 1]!;
  const said = body.messages.filter((m) => m.role === "user").map((m) => contentText(m.content)).join(" ");
  if (last.role === "user" && contentText(last.content).includes("weather")) {
    const call = { id: "call_1", type: "function", function: { name: "get_weather", arguments: JSON.stringify({ city: "Paris" }) } };
    return completion({ role: "assistant", content: null, tool_calls: [call] }, "tool_calls");
  }
  if (last.role === "tool") {
    return completion({ role: "assistant", content: `It is ${contentText(last.content)} in Paris.` }, "stop");
  }
  const name = said.includes("My name is Ada") ? "Ada" : "unknown";
  return completion({ role: "assistant", content: `Your name is ${name}.` }, "stop");
}

export interface ScriptedChatModel {
  /** The base URL for an OpenAI client ("http://127.0.0.1:PORT/v1"). */
  readonly baseUrl: string;
  /** The requests received, oldest first. */
  readonly requests: ChatRequest[];
  close(): Promise<void>;
}

/** Starts the scripted model on a free loopback port. */
export async function startScriptedChatModel(): Promise<ScriptedChatModel> {
  const requests: ChatRequest[] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (raw += chunk));
    req.on("end", () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      const body = JSON.parse(raw) as ChatRequest;
      requests.push(body);
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(answer(body)));
    });
  });
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise<void>((closed) => server.close(() => closed())),
  };
}
