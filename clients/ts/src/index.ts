// @taskmem/client: the TypeScript client of taskmem.

export {
  authInterceptor,
  createTaskmemClient,
  DEFAULT_BASE_URL,
  DEFAULT_PING_INTERVAL_MS,
  DEFAULT_TIMEOUT_MS,
  MIN_PING_INTERVAL_MS,
  services,
  type TaskmemClient,
  type TaskmemClientOptions,
  type TaskmemServiceClients,
} from "./client.js";
export {
  claimNext,
  DEFAULT_LEASE_MS,
  LeaseKeeper,
  type ClaimedItem,
  type ClaimNextOptions,
  type KeepLeaseOptions,
} from "./claims.js";
export { isRetryableStreamError, type EventFilter, type SubscribeOptions } from "./events.js";
export {
  DEFAULT_RETRY_POLICY,
  isDeclaredSafeToRepeat,
  retryDelayMs,
  retryInterceptor,
  type RetryPolicy,
} from "./retry.js";
export { CallLimit } from "./overload.js";
export { ERROR_DOMAIN, errorField, errorInfo, ErrorInfoSchema, errorReason, type ErrorInfo } from "./errors.js";

// The generated messages, enums and service descriptors.
export * from "./gen/taskmem/v1/checkpoint_pb.js";
export * from "./gen/taskmem/v1/checkpoint_service_pb.js";
export * from "./gen/taskmem/v1/error_reason_pb.js";
export * from "./gen/taskmem/v1/event_pb.js";
export * from "./gen/taskmem/v1/memory_pb.js";
export * from "./gen/taskmem/v1/memory_service_pb.js";
export * from "./gen/taskmem/v1/state_pb.js";
export * from "./gen/taskmem/v1/state_service_pb.js";
export * from "./gen/taskmem/v1/task_pb.js";
export * from "./gen/taskmem/v1/task_service_pb.js";
export * from "./gen/taskmem/v1/wait_pb.js";
export * from "./gen/taskmem/v1/wait_service_pb.js";

// What callers need from Connect-ES to handle errors and set call options.
export { Code, ConnectError, type CallOptions, type Interceptor } from "@connectrpc/connect";
