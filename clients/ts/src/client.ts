// createTaskmemClient: typed Connect-ES clients for every taskmem service over
// one HTTP/2 connection, with the bearer token, namespace and a default
// deadline added to every call.

import type * as http2 from "node:http2";

import { createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";

import { CheckpointService } from "./gen/taskmem/v1/checkpoint_service_pb.js";
import type { Event } from "./gen/taskmem/v1/event_pb.js";
import { MemoryService } from "./gen/taskmem/v1/memory_service_pb.js";
import { StateService } from "./gen/taskmem/v1/state_service_pb.js";
import { TaskService } from "./gen/taskmem/v1/task_service_pb.js";
import { WaitService } from "./gen/taskmem/v1/wait_service_pb.js";
import { claimNext, LeaseKeeper, type ClaimedItem, type ClaimNextOptions, type KeepLeaseOptions } from "./claims.js";
import { subscribeEvents, type EventFilter, type SubscribeOptions } from "./events.js";
import { DEFAULT_RETRY_POLICY, retryInterceptor, type RetryPolicy } from "./retry.js";

/**
 * The services of the API, under the property name a TaskmemClient exposes
 * each one as. Adding a service to the client is one line here.
 */
export const services = {
  tasks: TaskService,
  waits: WaitService,
  state: StateService,
  memory: MemoryService,
  checkpoints: CheckpointService,
} as const;

/** One typed Connect-ES client per service: `client.tasks.createTask(...)`. */
export type TaskmemServiceClients = {
  readonly [K in keyof typeof services]: Client<(typeof services)[K]>;
};

/** The default server address: what `make run` listens on. */
export const DEFAULT_BASE_URL = "http://127.0.0.1:50051";

/** The default deadline of a call, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;

/** The default interval of keepalive PINGs on a connection with open streams. */
export const DEFAULT_PING_INTERVAL_MS = 30_000;

/**
 * The shortest keepalive interval the server accepts: grpc C-core closes a
 * connection whose client pings more often than
 * grpc.http2.min_recv_ping_interval_without_data_ms (1 s on a taskmem
 * server by default) with GOAWAY "too_many_pings".
 */
export const MIN_PING_INTERVAL_MS = 1_000;

export interface TaskmemClientOptions {
  /** "http://host:port" or "https://host:port". Default http://127.0.0.1:50051. */
  baseUrl?: string;
  /** API key, sent as "authorization: Bearer <token>" on every call. */
  token?: string;
  /** Sent as "x-taskmem-namespace" on every call; default: the key's first namespace. */
  namespace?: string;
  /**
   * The deadline of every call, in milliseconds (default 30,000). A call may
   * set its own with `{ timeoutMs }`; `{ timeoutMs: 0 }` means none. The
   * default applies to server streams too (pass `{ timeoutMs: 0 }` to tail an
   * action log open-ended), except subscribeEvents, which has no deadline.
   * Set 0 here for no default deadline.
   */
  timeoutMs?: number;
  /**
   * Keepalive PING interval on a connection with open streams, so a dead
   * connection under a quiet subscription is noticed. Default 30,000; at
   * least 1,000 (MIN_PING_INTERVAL_MS), since the server closes connections
   * that ping more often. Idle connections (no open stream) are not pinged.
   */
  pingIntervalMs?: number;
  /** How long a keepalive PING may go unanswered before the connection is dropped. Default 15,000. */
  pingTimeoutMs?: number;
  /** Extra interceptors, run after the one adding the token and namespace. */
  interceptors?: Interceptor[];
  /**
   * How unary calls are retried on UNAVAILABLE: only those the contract
   * declares safe to repeat (idempotency_level NO_SIDE_EFFECTS or IDEMPOTENT)
   * and those with a request_id. Default DEFAULT_RETRY_POLICY; `{ attempts: 1 }`
   * turns retries off.
   */
  retry?: RetryPolicy;
  /** Options for node's http2.connect(), for example `{ ca }` for TLS with a private CA. */
  nodeOptions?: http2.ClientSessionOptions | http2.SecureClientSessionOptions;
}

export interface TaskmemClient extends TaskmemServiceClients {
  /** The transport every service client uses, for createClient() of other services. */
  readonly transport: Transport;
  /**
   * Streams the events matching filter, in cursor order, each exactly once,
   * reconnecting from the last delivered cursor when the stream breaks. See
   * SubscribeOptions for how it ends.
   */
  subscribeEvents(filter?: EventFilter, options?: SubscribeOptions): AsyncIterable<Event>;
  /**
   * Claims the next ready plan item for holderId (ClaimPlanItem), waiting
   * while items remain but none is ready; undefined once the plan (its
   * matching part) is drained. See claims.ts.
   */
  claimNext(taskId: string, holderId: string, options?: ClaimNextOptions): Promise<ClaimedItem | undefined>;
  /**
   * Renews the claim every third of its lease until stop(), or until it is
   * lost (then `signal` aborts and `lostTo` names the new holder).
   */
  keepLease(claimed: ClaimedItem, options?: KeepLeaseOptions): LeaseKeeper;
  /**
   * Closes the connection. Calls and streams in flight fail with
   * Code.Canceled, except subscriptions, which end quietly.
   */
  close(): void;
}

/** An interceptor that adds the bearer token and the namespace unless the call set its own. */
export function authInterceptor(token?: string, namespace?: string): Interceptor {
  return (next) => async (req) => {
    if (token !== undefined && token !== "" && !req.header.has("authorization")) {
      req.header.set("authorization", `Bearer ${token}`);
    }
    if (namespace !== undefined && namespace !== "" && !req.header.has("x-taskmem-namespace")) {
      req.header.set("x-taskmem-namespace", namespace);
    }
    return await next(req);
  };
}

/**
 * Creates a client for a taskmem server.
 *
 *     const client = createTaskmemClient({ baseUrl: "http://127.0.0.1:50051", token, timeoutMs: 10_000 });
 *     const { task } = await client.tasks.createTask({ name: "deploy", plan: [...] });
 *     for await (const event of client.subscribeEvents({ taskIds: [task!.id] }, { signal })) { ... }
 *
 * Errors are ConnectError with the gRPC code in `err.code`; errorReason(err)
 * reads the server's ErrorInfo reason.
 */
export function createTaskmemClient(options: TaskmemClientOptions = {}): TaskmemClient {
  const baseUrl = options.baseUrl ?? DEFAULT_BASE_URL;
  const pingIntervalMs = options.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS;
  if (!(pingIntervalMs >= MIN_PING_INTERVAL_MS)) {
    throw new RangeError(
      `taskmem: pingIntervalMs must be at least ${MIN_PING_INTERVAL_MS} ms (got ${pingIntervalMs}); ` +
        "the server closes connections that ping more often (too_many_pings)",
    );
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sessionManager = new Http2SessionManager(
    baseUrl,
    { pingIntervalMs, pingTimeoutMs: options.pingTimeoutMs, pingIdleConnection: false },
    options.nodeOptions,
  );
  const transport = createGrpcTransport({
    baseUrl,
    sessionManager,
    defaultTimeoutMs: timeoutMs > 0 ? timeoutMs : undefined,
    interceptors: [
      authInterceptor(options.token, options.namespace),
      ...(options.interceptors ?? []),
      retryInterceptor(options.retry ?? DEFAULT_RETRY_POLICY),
    ],
  });
  const clients = Object.fromEntries(
    Object.entries(services).map(([name, service]) => [name, createClient(service, transport)]),
  ) as unknown as TaskmemServiceClients;
  let closed = false;
  return {
    ...clients,
    transport,
    subscribeEvents(filter: EventFilter = {}, subscribeOptions: SubscribeOptions = {}) {
      return subscribeEvents(clients.tasks, filter, subscribeOptions, () => closed);
    },
    claimNext(taskId: string, holderId: string, claimOptions: ClaimNextOptions = {}) {
      return claimNext(clients.tasks, taskId, holderId, claimOptions);
    },
    keepLease(claimed: ClaimedItem, keepOptions: KeepLeaseOptions = {}) {
      return new LeaseKeeper(clients.tasks, claimed, keepOptions);
    },
    close() {
      closed = true;
      sessionManager.abort();
    },
  };
}
