// Unary retries decided by the contract: an RPC declared
// `idempotency_level = NO_SIDE_EFFECTS` (a read) or IDEMPOTENT, or a request
// with a request_id, is repeated on UNAVAILABLE; so is any call an overloaded
// server refused before starting it, after the pause the server asks for.

import { clone, type DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor, type UnaryRequest } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";

import { errorReason } from "./errors.js";
import { CallLimit } from "./overload.js";
import { RetryInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { ErrorReason } from "./gen/taskmem/v1/error_reason_pb.js";

export interface RetryPolicy {
  /** Attempts in all, the first included; 1 turns retries off. */
  attempts: number;
  /** The pause before the second attempt in ms, doubled up to maxBackoffMs, jittered. */
  initialBackoffMs: number;
  maxBackoffMs: number;
  /**
   * Keep fewer calls at the server at once after it refuses one as
   * overloaded, holding the rest in the client until calls finish (CallLimit);
   * false sends every call at once. Default true.
   */
  limitCallsInFlight?: boolean;
}

/** What createTaskmemClient uses unless its `retry` option says otherwise. */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = { attempts: 8, initialBackoffMs: 100, maxBackoffMs: 2_000 };

/** Whether the contract declares the RPC safe to repeat: NO_SIDE_EFFECTS or IDEMPOTENT. */
export function isDeclaredSafeToRepeat(method: DescMethod): boolean {
  return (
    method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS ||
    method.idempotency === MethodOptions_IdempotencyLevel.IDEMPOTENT
  );
}

/**
 * The pause in ms an overloaded server asked for before a retry: the
 * grpc-retry-pushback-ms trailer, else a google.rpc.RetryInfo detail;
 * undefined when it asked none.
 */
export function retryDelayMs(err: unknown): number | undefined {
  if (!(err instanceof ConnectError)) {
    return undefined;
  }
  const pushback = err.metadata.get("grpc-retry-pushback-ms");
  if (pushback !== null && /^\d+$/.test(pushback)) {
    return Number(pushback);
  }
  const delay = err.findDetails(RetryInfoSchema)[0]?.retryDelay;
  return delay === undefined ? undefined : Number(delay.seconds) * 1000 + delay.nanos / 1e6;
}

/**
 * An interceptor that repeats a unary call on UNAVAILABLE when it is safe:
 * the RPC is declared safe to repeat, or its request has a request_id (an
 * empty one is filled once, on a copy, so every attempt carries the same id
 * and the server returns the first result), or an overloaded server refused
 * it before starting it (ErrorReason.OVERLOADED). A pause the server asks
 * for (retryDelayMs) is waited at least. The call's deadline and signal
 * cover all attempts. Unless policy.limitCallsInFlight is false, attempts
 * past the client's limit of calls in flight (CallLimit) wait in the client.
 */
export function retryInterceptor(policy: RetryPolicy = DEFAULT_RETRY_POLICY): Interceptor {
  const limit = policy.limitCallsInFlight === false ? undefined : new CallLimit();
  return (rawNext) => async (req) => {
    if (req.stream) {
      return await rawNext(req);
    }
    const next: typeof rawNext =
      limit === undefined ? rawNext : (attempt) => limited(limit, rawNext, attempt as UnaryRequest);
    if (policy.attempts <= 1) {
      return await next(req);
    }
    const requestId = req.method.input.fields.find((field) => field.name === "request_id");
    const safe = requestId !== undefined || isDeclaredSafeToRepeat(req.method);
    let message = req.message;
    if (requestId !== undefined && !(message as Record<string, unknown>)[requestId.localName]) {
      message = clone(req.method.input, message);
      (message as Record<string, unknown>)[requestId.localName] = randomBytes(16).toString("hex");
    }
    let delayMs = policy.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      let asked: number | undefined;
      try {
        return await next({ ...req, message });
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Unavailable || attempt >= policy.attempts || req.signal.aborted) {
          throw err;
        }
        if (!safe && errorReason(err) !== ErrorReason.OVERLOADED) {
          throw err;
        }
        asked = retryDelayMs(err);
      }
      await pause(Math.max(delayMs / 2 + Math.random() * (delayMs / 2), asked ?? 0), req.signal);
      delayMs = Math.min(2 * delayMs, policy.maxBackoffMs);
    }
  };
}

/** One attempt, sent once the client's limit of calls in flight allows it. */
async function limited<R>(limit: CallLimit, next: (req: UnaryRequest) => Promise<R>, req: UnaryRequest): Promise<R> {
  const takenAt = await limit.acquire(req.signal);
  let overloaded = false;
  try {
    return await next(req);
  } catch (err) {
    overloaded = ConnectError.from(err).code === Code.Unavailable && errorReason(err) === ErrorReason.OVERLOADED;
    throw err;
  } finally {
    limit.release(takenAt, overloaded);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
