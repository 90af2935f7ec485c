// A small LangGraph.js graph whose checkpoints live in taskmem.
//
// The graph drafts, reviews and revises an answer; the one-line change from
// LangGraph's MemorySaver is `checkpointer: new TaskmemSaver({ baseUrl })`.
// The thread becomes a taskmem task: each checkpoint is an event and a step on
// the task's web page, another process (here: a second saver) resumes the
// thread from its last checkpoint, and copyThread forks the task.
//
//     make run                                                   # in another terminal
//     cd clients/ts && npm run build && node dist/examples/langgraph_graph.js [--address 127.0.0.1:50051]
//
// TASKMEM_API_KEY is sent as the token when set.

import { parseArgs } from "node:util";

import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { TaskmemSaver } from "@taskmem/client/langgraph";

const Draft = Annotation.Root({
  question: Annotation<string>,
  notes: Annotation<string[]>({ reducer: (notes, more) => notes.concat(more), default: () => [] }),
  answer: Annotation<string>,
});

function build(saver: TaskmemSaver) {
  return new StateGraph(Draft)
    .addNode("draft", (state) => ({ answer: `Draft answer to "${state.question}"`, notes: ["drafted"] }))
    .addNode("review", (state) => ({ notes: [state.answer.length > 30 ? "reviewed: too long" : "reviewed: fine"] }))
    .addNode("revise", (state) => ({ answer: state.answer.slice(0, 30), notes: ["revised"] }))
    .addEdge(START, "draft")
    .addEdge("draft", "review")
    .addEdge("review", "revise")
    .addEdge("revise", END)
    .compile({ checkpointer: saver });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { address: { type: "string", default: "127.0.0.1:50051" } } });
  const baseUrl = /^https?:\/\//.test(values.address) ? values.address : `http://${values.address}`;
  const token = process.env["TASKMEM_API_KEY"];
  const saver = new TaskmemSaver({ baseUrl, token });
  const threadId = `example-${Math.random().toString(16).slice(2, 10)}`;
  const config = { configurable: { thread_id: threadId } };

  const result = await build(saver).invoke({ question: "Which database should the ledger use?" }, config);
  console.log(`graph: answer: ${result.answer}`);
  const taskId = await saver.taskOf(threadId);
  console.log(`graph: thread ${threadId} is task ${taskId} (its web page lists each step)`);
  const history = [];
  for await (const tuple of saver.list(config)) history.push(tuple);
  for (const tuple of history.reverse()) {
    console.log(`graph: checkpoint step ${tuple.metadata?.step} (${tuple.metadata?.source})`);
  }
  saver.close();

  // Another saver (another process would do the same) goes on from the thread's last checkpoint.
  const later = new TaskmemSaver({ baseUrl, token });
  const again = await build(later).invoke({ question: "And the cache?" }, config);
  console.log(`graph: notes: ${again.notes.join(", ")}`);
  const forkThread = `${threadId}-fork`;
  const forkTask = await later.copyThread(threadId, forkThread);
  let copies = 0;
  for await (const _ of later.list({ configurable: { thread_id: forkThread } })) copies += 1;
  const forked = await later.getTuple({ configurable: { thread_id: forkThread } });
  console.log(
    `graph: copied to thread ${forkThread}, task ${forkTask} (a fork of ${taskId}): ` +
      `${copies} checkpoints, latest ${forked === undefined ? "missing" : "found"}`,
  );
  later.close();
  console.log("graph: done");
}

await main();
