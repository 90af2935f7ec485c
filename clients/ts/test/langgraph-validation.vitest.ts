// TaskmemSaver passes LangGraph.js's own checkpointer suite,
// @langchain/langgraph-checkpoint-validation, against a live server. Run by
// vitest (vitest.config.mjs: globals, which the suite's describe/it need);
// its CLI is broken in 1.1.1, so the suite is registered through validate().

import { validate } from "@langchain/langgraph-checkpoint-validation";

import { TaskmemSaver } from "../src/langgraph.js";
import { startServer, type TestServer } from "../test-support/server.js";

let server: TestServer | undefined;

/**
 * The suite expects each checkpointer it creates to start empty and its
 * destroyCheckpointer to remove what it wrote; the suite shares one server, so
 * the saver under test remembers its threads and deletes them at the end.
 */
class CleanedUpSaver extends TaskmemSaver {
  readonly threads = new Set<string>();

  override async put(...args: Parameters<TaskmemSaver["put"]>): ReturnType<TaskmemSaver["put"]> {
    const stored = await super.put(...args);
    this.threads.add(String(stored.configurable?.["thread_id"]));
    return stored;
  }

  async cleanUp(): Promise<void> {
    for (const thread of this.threads) await this.deleteThread(thread);
    this.close();
  }
}

validate<CleanedUpSaver>({
  checkpointerName: "@taskmem/client/langgraph",
  beforeAllTimeout: 60_000,
  async beforeAll() {
    server = await startServer();
  },
  async afterAll() {
    await server?.dispose();
  },
  createCheckpointer() {
    if (server === undefined) throw new Error("the server was not started");
    return new CleanedUpSaver({ baseUrl: server.baseUrl, timeoutMs: 10_000 });
  },
  async destroyCheckpointer(saver) {
    await saver.cleanUp();
  },
});
