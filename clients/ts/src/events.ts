// subscribeEvents: TaskService.SubscribeEvents as an async iterable that
// survives broken streams by resubscribing after the last delivered cursor.

import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";

import type { Event, EventType } from "./gen/taskmem/v1/event_pb.js";
import type { TaskService } from "./gen/taskmem/v1/task_service_pb.js";

/** Which events to stream, and from where. */
export interface EventFilter {
  /** Only events of these tasks; empty means every task of the namespace. */
  taskIds?: string[];
  /** Only events of these types; empty means all. */
  types?: EventType[];
  /**
   * Start after this cursor: 0 (the default) replays everything, -1 starts
   * live at the current end, n resumes after the event with cursor n.
   */
  afterCursor?: bigint | number;
}

/** How a subscription reconnects and ends. */
export interface SubscribeOptions {
  /**
   * Ends the subscription. The caller's own abort ends the `for await` loop
   * quietly (no error is thrown), whether it comes while waiting for an event
   * or while waiting to reconnect.
   */
  signal?: AbortSignal;
  /** The first reconnect delay in ms (default 100). It doubles after each failed attempt. */
  initialBackoffMs?: number;
  /** The longest reconnect delay in ms (default 5,000). */
  maxBackoffMs?: number;
  /** Called with the error that broke the stream and the delay before the next attempt. */
  onReconnect?: (error: ConnectError, delayMs: number, attempt: number) => void;
  /** Extra request headers for every SubscribeEvents call (for example "x-correlation-id"). */
  headers?: CallOptions["headers"];
}

/**
 * The codes on which a broken subscription is resumed, the set SubscribeEvents'
 * comment in task_service.proto documents for every client: the server shut down
 * or restarted (UNAVAILABLE), dropped a slow subscriber (RESOURCE_EXHAUSTED),
 * the stream or connection was reset (INTERNAL, as connect-node reports an
 * HTTP/2 RST_STREAM or a lost socket), the stream was aborted (ABORTED) or
 * cancelled by something other than the caller (CANCELED, for example a
 * GOAWAY).
 */
const RETRYABLE_CODES: ReadonlySet<Code> = new Set([
  Code.Unavailable,
  Code.ResourceExhausted,
  Code.Internal,
  Code.Aborted,
  Code.Canceled,
]);

/** Whether a subscription resumes after this error; others are thrown to the caller. */
export function isRetryableStreamError(err: unknown): boolean {
  return RETRYABLE_CODES.has(ConnectError.from(err).code);
}

/**
 * The subscription itself; use TaskmemClient.subscribeEvents.
 *
 * Every event is delivered once, in cursor order: after a broken stream the
 * next SubscribeEvents call starts after the cursor of the last event this
 * iterator delivered, and any event at or below that cursor is skipped.
 * A stream the server ends cleanly is resumed too (a subscription has no
 * end). Errors with other codes (INVALID_ARGUMENT, UNAUTHENTICATED,
 * PERMISSION_DENIED, ...) are thrown as ConnectError.
 *
 * With afterCursor -1, events committed while the stream is broken before it
 * delivered its first event are not replayed: there is no cursor to resume
 * from yet.
 */
export async function* subscribeEvents(
  tasks: Client<typeof TaskService>,
  filter: EventFilter,
  options: SubscribeOptions,
  clientClosed: () => boolean = () => false,
): AsyncGenerator<Event, void, undefined> {
  const { signal } = options;
  const initial = Math.max(1, options.initialBackoffMs ?? 100);
  const max = Math.max(initial, options.maxBackoffMs ?? 5_000);
  let cursor = BigInt(filter.afterCursor ?? 0);
  let delay = initial;
  let attempt = 0;
  const ended = () => signal?.aborted === true || clientClosed();

  while (!ended()) {
    // One controller per call: it follows the caller's signal, and it ends
    // the call when the consumer leaves the loop early (break / return).
    const call = new AbortController();
    const forward = () => call.abort(signal?.reason);
    signal?.addEventListener("abort", forward, { once: true });
    let failure: ConnectError | undefined;
    try {
      const stream = tasks.subscribeEvents(
        { taskIds: filter.taskIds ?? [], types: filter.types ?? [], afterCursor: cursor },
        { signal: call.signal, timeoutMs: 0, headers: options.headers },
      );
      for await (const response of stream) {
        const event = response.event;
        if (event === undefined || event.cursor <= cursor) {
          continue; // never deliver an event twice, whatever the server sends
        }
        cursor = event.cursor;
        delay = initial;
        attempt = 0;
        yield event;
      }
    } catch (err) {
      failure = ConnectError.from(err);
    } finally {
      signal?.removeEventListener("abort", forward);
      call.abort();
    }
    if (ended()) {
      return;
    }
    if (failure !== undefined && !RETRYABLE_CODES.has(failure.code)) {
      throw failure;
    }
    attempt++;
    const wait = jitter(delay);
    options.onReconnect?.(failure ?? new ConnectError("the server ended the stream", Code.Unavailable), wait, attempt);
    if (!(await sleep(wait, signal))) {
      return;
    }
    delay = Math.min(delay * 2, max);
  }
}

/** A delay in [d/2, d], so that many clients do not reconnect in step. */
function jitter(d: number): number {
  return d / 2 + Math.random() * (d / 2);
}

/** Resolves true after ms, or false as soon as signal aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve(false);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
