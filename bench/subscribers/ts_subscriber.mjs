// Events-bench subscriber on the TypeScript client (@taskmem/client, built into clients/ts/dist).
//
//     node ts_subscriber.mjs ADDRESS TASK_ID AFTER_CURSOR
//
// Same protocol as python_subscriber.py: "ready" when the ready message arrives, then on "end"
// one "SEND_NS APPEND_NS RECV_NS" line per timed event.

import { performance } from "node:perf_hooks";

import { createTaskmemClient, EventType } from "../../clients/ts/dist/src/index.js";

const [address, taskId, afterCursor] = process.argv.slice(2);
// Wall-clock nanoseconds with sub-millisecond resolution (Date.now() has only milliseconds).
const nowNs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e3)) * 1000n;

const client = createTaskmemClient({ baseUrl: `http://${address}` });
const received = [];
for await (const event of client.subscribeEvents({
  taskIds: [taskId],
  types: [EventType.MESSAGE_POSTED],
  afterCursor: BigInt(afterCursor),
})) {
  const now = nowNs();
  const content = event.payload?.content;
  if (content === "ready") {
    process.stdout.write("ready\n");
  } else if (content === "end") {
    break;
  } else {
    const appended = event.createTime ? event.createTime.seconds * 1_000_000_000n + BigInt(event.createTime.nanos) : 0n;
    received.push(`${content} ${appended} ${now}\n`);
  }
}
client.close();
process.stdout.write(received.join(""));
