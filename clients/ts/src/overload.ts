// How many unary calls one client keeps at the server at once, learned from
// the server's refusals. A server past capacity refuses a call (UNAVAILABLE,
// ErrorReason.OVERLOADED), but a refusal still costs it part of a call, and a
// call reaches the code that refuses it only after waiting in gRPC's queue of
// calls not yet started: a client that keeps sending every call keeps that
// queue full, and far past capacity the calls the server accepts waited
// seconds in it first. So each client limits its own calls in flight, as TCP
// limits its bytes in flight: the limit halves when the server refuses a call
// sent under the current limit, and grows by one for each limit's worth of
// calls that succeed. Calls past the limit wait in the client, in order.

import { Code, ConnectError } from "@connectrpc/connect";

/** Calls in flight at once: unlimited (up to `ceiling`) until the server first refuses one as overloaded. */
export class CallLimit {
  private limitValue: number;
  private inFlight = 0;
  private decreasedAt = 0;
  private readonly waiting: { resolve: (takenAt: number) => void }[] = [];

  constructor(
    private readonly ceiling = 1024,
    private readonly floor = 1,
  ) {
    this.limitValue = ceiling;
  }

  get limit(): number {
    return Math.floor(this.limitValue);
  }

  /** Waits for a slot, in arrival order; the time it was taken, for release(). Rejects when signal aborts. */
  acquire(signal: AbortSignal): Promise<number> {
    if (this.inFlight < this.limitValue && this.waiting.length === 0) {
      this.inFlight++;
      return Promise.resolve(performance.now());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (takenAt: number) => {
          signal.removeEventListener("abort", onAbort);
          resolve(takenAt);
        },
      };
      const onAbort = (): void => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(ConnectError.from(signal.reason ?? new ConnectError("aborted while held by the client", Code.Canceled)));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  /** Gives the slot back; overloaded: the server refused the call sent in it as past capacity. */
  release(takenAt: number, overloaded: boolean): void {
    this.inFlight--;
    if (!overloaded) {
      this.limitValue = Math.min(this.ceiling, this.limitValue + 1 / this.limitValue);
    } else if (takenAt >= this.decreasedAt) {
      // Once per round: the calls sent before the last decrease were sent under the old limit.
      this.limitValue = Math.max(this.floor, Math.min(this.limitValue, this.inFlight + 1) / 2);
      this.decreasedAt = performance.now();
    }
    while (this.waiting.length > 0 && this.inFlight < this.limitValue) {
      this.inFlight++;
      this.waiting.shift()!.resolve(performance.now());
    }
  }
}
