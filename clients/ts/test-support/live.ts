// A live server and a client on it for one describe block: started before its tests, closed after them.

import { after, before } from "node:test";

import { createTaskmemClient, type TaskmemClient } from "../src/index.js";
import { startServer, type ServerOptions, type TestServer } from "./server.js";

export interface LiveServer {
  readonly server: TestServer;
  readonly client: TaskmemClient;
}

/** Call inside describe(); read .server and .client inside its tests. */
export function liveServer(options: ServerOptions = {}): LiveServer {
  let server: TestServer | undefined;
  let client: TaskmemClient | undefined;
  before(async () => {
    server = await startServer(options);
    client = createTaskmemClient({ baseUrl: server.baseUrl, timeoutMs: 10_000 });
  });
  after(async () => {
    client?.close();
    await server?.dispose();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("liveServer: read before the suite's before() hook ran");
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get client() {
      return started(client);
    },
  };
}
