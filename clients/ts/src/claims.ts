// Many agents on one plan: claim the next ready item (ClaimPlanItem), and keep
// its lease (RenewClaim) in the background while working on it.
//
//     let claimed = await client.claimNext(taskId, "agent-3", { leaseMs: 30_000 });
//     while (claimed !== undefined) {
//       const lease = client.keepLease(claimed);
//       try {
//         await work(claimed.item, { signal: lease.signal }); // aborted if another agent takes the item over
//         await client.tasks.updatePlanItem({ taskId, itemId: claimed.item.id, holderId: "agent-3",
//                                             status: PlanItemStatus.COMPLETED });
//       } finally {
//         lease.stop();
//       }
//       claimed = await client.claimNext(taskId, "agent-3", { leaseMs: 30_000 });
//     }

import { type Client } from "@connectrpc/connect";
import { timestampMs } from "@bufbuild/protobuf/wkt";

import { ErrorReason } from "./gen/taskmem/v1/error_reason_pb.js";
import type { PlanItem, PlanItemClaim } from "./gen/taskmem/v1/task_pb.js";
import type { TaskService } from "./gen/taskmem/v1/task_service_pb.js";
import { errorInfo, errorReason } from "./errors.js";

/** The default lease of a claim: 30 s, as the server's. */
export const DEFAULT_LEASE_MS = 30_000;

/** An item ClaimPlanItem handed to this holder, and the lease on it. */
export interface ClaimedItem {
  readonly item: PlanItem;
  /** The lease as the server last said (keepLease updates it on every renewal). */
  claim: PlanItemClaim;
  /** The lease asked for, in milliseconds. */
  readonly leaseMs: number;
}

export interface ClaimNextOptions {
  /** How long the claim lasts unless renewed (1,000 to 3,600,000 ms). Default 30,000. */
  leaseMs?: number;
  /** Claim this item and no other. */
  itemId?: string;
  /** Only items of these stages. */
  stages?: string[];
  /** Only items expecting these tools. */
  toolNames?: string[];
  /**
   * While matching items remain but none is ready (held by other agents, or
   * waiting on dependencies), ask again every pollMs (default true). With
   * false, resolve undefined at once then too.
   */
  wait?: boolean;
  /** How often to ask again while waiting. Default 500 ms. */
  pollMs?: number;
  /** Stops waiting (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
}

function duration(ms: number): { seconds: bigint; nanos: number } {
  return { seconds: BigInt(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 };
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Claims the next ready item of the task's plan for holderId. Resolves
 * undefined once nothing matching is left (every matching item done or
 * failed), or at once when none is ready and `wait` is false.
 */
export async function claimNext(
  tasks: Client<typeof TaskService>,
  taskId: string,
  holderId: string,
  options: ClaimNextOptions = {},
): Promise<ClaimedItem | undefined> {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  for (;;) {
    const answer = await tasks.claimPlanItem(
      {
        taskId,
        holderId,
        lease: duration(leaseMs),
        itemId: options.itemId ?? "",
        stages: options.stages ?? [],
        toolNames: options.toolNames ?? [],
      },
      { signal: options.signal },
    );
    if (answer.item !== undefined && answer.claim !== undefined) {
      return { item: answer.item, claim: answer.claim, leaseMs };
    }
    if (answer.remainingCount === 0 || options.wait === false) {
      return undefined;
    }
    await sleep(options.pollMs ?? 500, options.signal);
  }
}

export interface KeepLeaseOptions {
  /** Called once when the claim is lost, with the holder that has the item now ("" for nobody). */
  onLost?: (lostTo: string) => void;
}

/**
 * Renews a claim every third of its lease until stop() or until the claim is
 * lost: the server refused a renewal (ErrorReason.CLAIM_NOT_HELD: another
 * agent holds the item now, or nobody), or no renewal succeeded before the
 * lease ran out. On loss `signal` aborts, `lostTo` names the new holder and
 * renewing stops: stop working on the item, since UpdatePlanItem with this
 * holder id will be refused.
 */
export class LeaseKeeper {
  /** Aborted when the claim is lost; pass it to the work on the item. */
  readonly signal: AbortSignal;
  /** Who holds the item after a loss ("" for nobody); undefined while held. */
  lostTo: string | undefined;
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly tasks: Client<typeof TaskService>,
    readonly claimed: ClaimedItem,
    private readonly options: KeepLeaseOptions = {},
  ) {
    this.signal = this.controller.signal;
    this.schedule();
  }

  /** Stops renewing; the claim stays until its lease ends or the item is finished. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Stops renewing and gives the item back at once (ReleaseClaim), for another agent to take. */
  async release(): Promise<void> {
    this.stop();
    if (this.lostTo === undefined) {
      const { item, claim } = this.claimed;
      await this.tasks.releaseClaim({ taskId: claim.taskId, itemId: item.id, holderId: claim.holderId });
    }
  }

  private schedule(): void {
    if (!this.stopped) {
      this.timer = setTimeout(() => void this.renew(), this.claimed.leaseMs / 3);
    }
  }

  private lose(holder: string): void {
    this.stop();
    this.lostTo = holder;
    this.controller.abort(new Error(`the claim of ${this.claimed.item.id} was lost to ${holder || "nobody"}`));
    this.options.onLost?.(holder);
  }

  private async renew(): Promise<void> {
    const { item, claim } = this.claimed;
    try {
      const renewed = await this.tasks.renewClaim(
        { taskId: claim.taskId, itemId: item.id, holderId: claim.holderId, lease: duration(this.claimed.leaseMs) },
        { timeoutMs: Math.max(1, Math.floor(this.claimed.leaseMs / 3)) }, // grpc-timeout takes whole units
      );
      if (renewed.claim !== undefined) this.claimed.claim = renewed.claim;
    } catch (err) {
      if (this.stopped) return;
      if (errorReason(err) === ErrorReason.CLAIM_NOT_HELD) {
        this.lose(errorInfo(err)?.metadata["holder_id"] ?? "");
        return;
      }
      const expires = this.claimed.claim.expireTime;
      if (expires === undefined || Date.now() >= timestampMs(expires)) {
        this.lose(""); // unreachable until the lease ran out: assume it is gone
        return;
      }
    }
    this.schedule();
  }
}
