// @taskmem/client/agents: TaskmemSession, an OpenAI Agents SDK (@openai/agents)
// Session kept in a taskmem task's transcript.
//
//     import { TaskmemSession } from "@taskmem/client/agents";
//     const session = new TaskmemSession(taskId, { baseUrl: "http://127.0.0.1:50051" });
//     const result = await run(agent, "Hello", { session });
//
// Each item the SDK adds is a message of the task's transcript (user, agent or
// tool; its readable text), so the conversation is part of the task's record,
// events, web view, search and retention, and the item's exact JSON is kept
// beside it and returned verbatim. popItem and clearSession retract items from
// the session; their messages stay in the transcript. The same RPCs as the
// Python TaskmemSession, so either language continues the other's session.

import type { MessageInitShape } from "@bufbuild/protobuf";
import type { AgentInputItem, Session } from "@openai/agents";

import { createTaskmemClient, type TaskmemClient, type TaskmemClientOptions } from "./client.js";
import { MessageRole, TaskStatus } from "./gen/taskmem/v1/task_pb.js";
import type { SessionItemSpecSchema } from "./gen/taskmem/v1/task_service_pb.js";

/** A transcript message's longest content (the server's limit). */
export const CONTENT_MAX = 100_000;
/** AddSessionItems' largest batch. */
const ITEMS_PER_CALL = 100;

const ROLES: Record<string, MessageRole> = {
  user: MessageRole.USER,
  assistant: MessageRole.AGENT,
  system: MessageRole.SYSTEM,
  developer: MessageRole.SYSTEM,
};

export interface TaskmemSessionOptions extends TaskmemClientOptions {
  /** A client to use (the caller closes it); otherwise the session makes one from the other options. */
  client?: TaskmemClient;
}

export class TaskmemSession implements Session {
  readonly client: TaskmemClient;
  private ownsClient: boolean;

  /** The session of task taskId; its session id is the task's id. */
  constructor(
    readonly taskId: string,
    options: TaskmemSessionOptions = {},
  ) {
    const { client, ...clientOptions } = options;
    this.client = client ?? createTaskmemClient(clientOptions);
    this.ownsClient = client === undefined;
  }

  /** A session on a new task (status EXECUTING) named name. */
  static async forNewTask(
    name: string,
    options: TaskmemSessionOptions & { goal?: string } = {},
  ): Promise<TaskmemSession> {
    const { goal, ...sessionOptions } = options;
    const client = sessionOptions.client ?? createTaskmemClient(sessionOptions);
    try {
      const { task } = await client.tasks.createTask({ name, goal: goal ?? "" });
      await client.tasks.updateTask({
        task: { id: task!.id, status: TaskStatus.EXECUTING },
        updateMask: { paths: ["status"] },
      });
      const session = new TaskmemSession(task!.id, { ...sessionOptions, client });
      session.ownsClient = sessionOptions.client === undefined;
      return session;
    } catch (err) {
      if (sessionOptions.client === undefined) client.close();
      throw err;
    }
  }

  async getSessionId(): Promise<string> {
    return this.taskId;
  }

  /** The items in order: all, or the newest limit. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && limit <= 0) return [];
    const { items } = await this.client.tasks.listSessionItems({ taskId: this.taskId, limit: limit ?? 0 });
    return items.map((item) => JSON.parse(item.itemJson) as AgentInputItem);
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    const specs = items.map(spec);
    for (let start = 0; start < specs.length; start += ITEMS_PER_CALL) {
      await this.client.tasks.addSessionItems({
        taskId: this.taskId,
        items: specs.slice(start, start + ITEMS_PER_CALL),
      });
    }
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const { item } = await this.client.tasks.popSessionItem({ taskId: this.taskId });
    return item === undefined ? undefined : (JSON.parse(item.itemJson) as AgentInputItem);
  }

  async clearSession(): Promise<void> {
    await this.client.tasks.clearSessionItems({ taskId: this.taskId });
  }

  /** Closes the client the session made (a given client is the caller's). */
  close(): void {
    if (this.ownsClient) this.client.close();
  }
}

function spec(item: AgentInputItem): MessageInitShape<typeof SessionItemSpecSchema> {
  const [role, content] = readable(item as unknown as Record<string, unknown>);
  const text = content.trim() || String((item as { type?: unknown }).type ?? "item");
  return { role, content: text.slice(0, CONTENT_MAX), itemJson: JSON.stringify(item) };
}

/** The transcript role and text of an item: a message's text, a tool call and its arguments, a tool's output. */
function readable(item: Record<string, unknown>): [MessageRole, string] {
  switch (item["type"]) {
    case "function_call":
      return [MessageRole.AGENT, `calls ${String(item["name"] ?? "")}(${String(item["arguments"] ?? "")})`];
    case "function_call_result":
      return [MessageRole.TOOL, text(item["output"])];
  }
  if (typeof item["role"] === "string") {
    return [ROLES[item["role"]] ?? MessageRole.AGENT, text(item["content"])];
  }
  return [MessageRole.AGENT, text(item["content"] ?? item["output"] ?? "")];
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(text).join("\n");
  if (content !== null && typeof content === "object") {
    const part = content as Record<string, unknown>;
    if (typeof part["text"] === "string") return part["text"];
    if (typeof part["refusal"] === "string") return part["refusal"];
    return JSON.stringify(content);
  }
  return content === undefined || content === null ? "" : String(content);
}
