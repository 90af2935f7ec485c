// Runs the real Python taskmem server for the tests: `python -m taskmem serve`
// on a free loopback port with a temporary database.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const READY = /^taskmem: serving on (\S+)$/;

/** The repository root: the nearest ancestor of this file holding server/taskmem. */
export const repoRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "server", "taskmem"))) {
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error("tests: cannot find the repository root (a folder holding server/taskmem)");
    }
    dir = parent;
  }
  return dir;
})();

/** The Python that runs the server: TASKMEM_PYTHON, else the repository's .venv. */
export const python: string = process.env["TASKMEM_PYTHON"] ?? join(repoRoot, ".venv", "bin", "python");

export interface ServerOptions {
  /** --api-key values ("KEY" or "KEY:ns1,ns2"). None: open, every call in the default namespace. */
  apiKeys?: string[];
  /** Extra TASKMEM_* settings, for example { TASKMEM_SUBSCRIBER_QUEUE_SIZE: "4" }. */
  env?: Record<string, string>;
}

export class TestServer {
  /** "127.0.0.1:PORT" once started; the same address after restart(). */
  address = "";
  readonly dir: string;
  readonly database: string;
  /** Everything the server wrote to stderr, for failure messages. */
  stderr = "";
  private child: ChildProcess | undefined;
  private exited: Promise<number | null> = Promise.resolve(null);

  constructor(private readonly options: ServerOptions = {}) {
    this.dir = mkdtempSync(join(tmpdir(), "taskmem-ts-"));
    this.database = join(this.dir, "t.db");
  }

  get baseUrl(): string {
    return `http://${this.address}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the server on a free port, or on its previous address after a stop. */
  async start(): Promise<this> {
    if (this.child !== undefined) {
      throw new Error("tests: server already running");
    }
    const listen = this.address === "" ? "127.0.0.1:0" : this.address;
    const args = ["-m", "taskmem", "serve", "--listen", listen, "--database", this.database];
    for (const key of this.options.apiKeys ?? []) {
      args.push("--api-key", key);
    }
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) {
      if (value !== undefined && !name.startsWith("TASKMEM_")) {
        env[name] = value;
      }
    }
    Object.assign(env, { PYTHONUNBUFFERED: "1" }, this.options.env);
    const child = spawn(python, args, { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    this.child = child;
    this.exited = new Promise((resolveExit) => child.once("exit", (code) => resolveExit(code)));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    // Keep draining stdout for the server's whole life, so it never blocks on a full pipe.
    const lines = createInterface({ input: child.stdout! });
    this.address = await new Promise<string>((resolveReady, reject) => {
      // A hang guard: a busy shared machine can take a minute to start the server.
      const timer = setTimeout(() => reject(new Error(`tests: server not ready after 120 s\n${this.stderr}`)), 120_000);
      child.once("error", (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`tests: server exited with ${code} before it was ready\n${this.stderr}`));
      });
      lines.on("line", (line) => {
        const ready = READY.exec(line.trim());
        if (ready?.[1] !== undefined) {
          clearTimeout(timer);
          resolveReady(ready[1]);
        }
      });
    });
    return this;
  }

  /** Sends SIGTERM (a graceful shutdown) and waits for the process to exit; returns its exit code. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    const child = this.child;
    if (child === undefined) {
      return null;
    }
    this.child = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
    }
    const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(killer);
    }
  }

  /** Stops the server and starts it again on the same address with the same database. */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Stops the server and removes its temporary folder. */
  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts a server; dispose() it in an after() hook. */
export async function startServer(options: ServerOptions = {}): Promise<TestServer> {
  return await new TestServer(options).start();
}

/** Resolves after ms milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}

/** How long a test waits for what the server does in its own time before calling it a hang: the Python suite's
 * guard (tests/support/eventually.py), long enough for any load the suite meets. */
export const HANG_GUARD_MS = 120_000;

/** `promise`, or a failure saying `what` if it has not settled within the hang guard: never what a test judges
 * (a timing a busy machine can stretch is no behaviour to assert). */
export async function withinHangGuard<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} (within ${HANG_GUARD_MS / 1000} s)`)), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([promise, guard]);
  } finally {
    clearTimeout(timer);
  }
}

/** A folder of this package's build output, for tests that run compiled files. */
export const distDir: string = resolve(dirname(fileURLToPath(import.meta.url)), "..");
