// An orchestrator driving one agent task through taskmem, in TypeScript.
//
// It registers a task with a plan, works through the plan recording every
// action (with its log lines) and completing it, asks "where was I?" after
// each step, parks the task on a wait until a reviewer approves the report,
// and meanwhile follows the task's event stream and logs it.
//
// Run it against a local server:
//
//     make run                               # in one shell: taskmem on 127.0.0.1:50051
//     cd clients/ts && npm run example       # in another: builds, then runs this file
//
// (npm run example = tsc, then `node dist/examples/orchestrator.js`.)
// Settings: TASKMEM_ADDRESS (host:port or a URL; default 127.0.0.1:50051) and
// TASKMEM_API_KEY (when the server has API keys).
//
// Copying it into your project: `import ... from "@taskmem/client"` works the
// same once the package is installed.

import {
  ActionStatus,
  ActionType,
  Code,
  ConnectError,
  createTaskmemClient,
  ErrorReason,
  errorReason,
  EventType,
  MessageKind,
  MessageRole,
  PlanItemStatus,
  TaskStatus,
  WaitStatus,
  type Event,
  type TaskmemClient,
} from "@taskmem/client";

const address = process.env["TASKMEM_ADDRESS"] ?? "127.0.0.1:50051";
const baseUrl = /^https?:\/\//.test(address) ? address : `http://${address}`;

const plan = [
  { id: "fetch", title: "Fetch last week's sales data", toolName: "http" },
  { id: "analyse", title: "Find the three weakest regions", dependsOn: ["fetch"], toolName: "python" },
  { id: "report", title: "Write the summary for the sales team", dependsOn: ["analyse"] },
];

/** What the "agent" does for each plan item: a tool call and the log lines it prints. */
const work: Record<string, { summary: string; log: string[]; output: Record<string, string | number> }> = {
  fetch: { summary: "GET /api/sales?week=47", log: ["200 OK", "4,812 rows"], output: { rows: 4812 } },
  analyse: { summary: "pandas groupby(region).sum()", log: ["12 regions", "weakest: north, east, islands"], output: { weakest: "north, east, islands" } },
  report: { summary: "draft the summary", log: ["412 words"], output: { words: 412 } },
};

function describe(event: Event): string {
  const p = event.payload ?? {};
  switch (event.type) {
    case EventType.TASK_CREATED:
      return String(p["name"]);
    case EventType.PLAN_REPLACED:
      return `version ${String(p["version"])}, ${Array.isArray(p["items"]) ? p["items"].length : 0} items`;
    case EventType.ACTION_LOG_APPENDED:
      return `lines ${String(p["first_sequence"])}..${String(p["last_sequence"])}`;
    case EventType.TASK_STATUS_CHANGED:
      return `${String(p["from"])} -> ${String(p["to"])}`;
    case EventType.PLAN_ITEM_UPDATED:
      return `${String(p["id"])} is ${String(p["status"])}`;
    case EventType.ACTION_RECORDED:
    case EventType.ACTION_COMPLETED:
      return `${String(p["summary"])} (${String(p["status"])})`;
    case EventType.MESSAGE_POSTED:
      return String(p["content"]);
    case EventType.WAIT_CREATED:
    case EventType.WAIT_RESOLVED:
      return `${String(p["criteria"])} (${String(p["status"])})`;
    default:
      return "";
  }
}

/** Follows the task's events until it finishes (true) or the signal aborts (false). */
async function followEvents(client: TaskmemClient, taskId: string, signal: AbortSignal): Promise<boolean> {
  for await (const event of client.subscribeEvents({ taskIds: [taskId] }, { signal })) {
    console.log(`  [event ${event.cursor}] ${EventType[event.type]} ${describe(event)}`);
    const to = event.payload?.["to"];
    if (event.type === EventType.TASK_STATUS_CHANGED && (to === "TASK_STATUS_COMPLETED" || to === "TASK_STATUS_FAILED")) {
      return true; // leaving the loop ends the subscription
    }
  }
  return false; // aborted: an abort ends the loop without an error
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

async function main(): Promise<void> {
  const client = createTaskmemClient({ baseUrl, token: process.env["TASKMEM_API_KEY"], timeoutMs: 10_000 });
  const stop = new AbortController();
  try {
    // 1. Register the task with its plan. The request_id makes a retry of this call harmless.
    const { task } = await client.tasks.createTask({
      name: "weekly sales summary",
      goal: "Summarise last week's sales and flag the weakest regions",
      context: { week: 47, audience: "sales team" },
      plan,
      requestId: `orchestrator-${process.pid}-${Date.now()}`,
    });
    if (task === undefined) {
      throw new Error("CreateTask returned no task");
    }
    console.log(`orchestrator: task ${task.id} registered with ${plan.length} plan items`);

    // 2. Follow its events from the start (cursor 0 replays what already happened).
    const following = followEvents(client, task.id, stop.signal);
    following.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"

    await client.tasks.updateTask({ task: { id: task.id, status: TaskStatus.EXECUTING }, updateMask: { paths: ["status"] } });

    // 3. Work through the plan, recording each step as it happens.
    for (const item of plan) {
      const step = work[item.id]!;
      await client.tasks.updatePlanItem({ taskId: task.id, itemId: item.id, status: PlanItemStatus.IN_PROGRESS });
      const { action } = await client.tasks.recordAction({
        taskId: task.id,
        planItemId: item.id,
        type: ActionType.TOOL,
        toolName: item.toolName ?? "",
        summary: step.summary,
      });
      for (const line of step.log) {
        await sleep(50); // the tool is working
        await client.tasks.appendActionLog({ actionId: action!.id, lines: [{ content: line }] });
      }
      await client.tasks.completeAction({ actionId: action!.id, status: ActionStatus.SUCCEEDED, output: step.output });
      await client.tasks.updatePlanItem({
        taskId: task.id,
        itemId: item.id,
        status: PlanItemStatus.COMPLETED,
        summary: step.log[step.log.length - 1],
      });
      // "Where was I?" — what an agent asks after a restart or a context compaction.
      const progress = await client.tasks.getProgress({ taskId: task.id });
      console.log(`orchestrator: where was I? ${progress.summary.replaceAll("\n", " ")}`);
    }

    // 4. The report needs a reviewer's approval: an EXTERNAL wait, ended by
    //    whoever calls ResolveWait (here a simulated reviewer, a second later).
    const { wait } = await client.waits.createWait({
      taskId: task.id,
      criteria: "sales lead approves the summary",
      target: { kind: { case: "external", value: { resolver: "sales lead" } } },
    });
    console.log(`orchestrator: waiting for ${wait!.criteria} (wait ${wait!.id})`);
    setTimeout(() => {
      client.waits
        .resolveWait({ waitId: wait!.id, result: "approved by dana" })
        .catch((err: unknown) => console.error("reviewer:", err));
    }, 1_000);
    // WatchWait streams the wait's state after every change and ends after a final one.
    let outcome = wait!;
    for await (const { wait: now } of client.waits.watchWait({ waitId: wait!.id }, { timeoutMs: 30_000 })) {
      outcome = now ?? outcome;
    }
    if (outcome.status !== WaitStatus.RESOLVED) {
      throw new Error(`the review ended ${WaitStatus[outcome.status]}: ${outcome.result}`);
    }
    console.log(`orchestrator: review ${WaitStatus[outcome.status]}: ${outcome.result}`);

    // 5. Finish: the final answer goes into the task's record.
    await client.tasks.postMessage({
      taskId: task.id,
      role: MessageRole.AGENT,
      kind: MessageKind.TEXT,
      content: "Weakest regions last week: north, east, islands.",
    });
    await client.tasks.updateTask({
      task: { id: task.id, status: TaskStatus.COMPLETED, finalAnswer: "Weakest regions: north, east, islands." },
      updateMask: { paths: ["status", "final_answer"] },
    });

    const timeout = setTimeout(() => stop.abort(), 10_000);
    const finished = await following;
    clearTimeout(timeout);
    if (!finished) {
      throw new Error("the completion event did not arrive within 10 s");
    }
    console.log("orchestrator: done");
  } finally {
    stop.abort();
    client.close();
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConnectError) {
    console.error(`orchestrator: ${Code[err.code]}: ${err.rawMessage} (reason ${ErrorReason[errorReason(err)]})`);
  } else {
    console.error("orchestrator:", err);
  }
  process.exitCode = 1;
});
