// Many agents on one plan against a live server: claimNext hands out ready
// items, waits for held ones and ends when the plan is drained; the lease
// keeper renews past the lease and aborts its signal when the claim is lost.

import assert from "node:assert/strict";
import { describe, test } from "node:test";

import { timestampMs } from "@bufbuild/protobuf/wkt";

import { PlanItemStatus } from "../src/index.js";
import { liveServer } from "../test-support/live.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("claims of plan items", () => {
  const live = liveServer();

  test("claimNext hands out ready items, waits while the rest is held and ends when drained", async () => {
    const { client } = live;
    const { task } = await client.tasks.createTask({
      name: "shared plan",
      plan: [
        { id: "build", title: "Build" },
        { id: "push", title: "Push", dependsOn: ["build"] },
      ],
    });
    const taskId = task!.id;
    const first = await client.claimNext(taskId, "agent-1", { leaseMs: 5_000 });
    assert.equal(first?.item.id, "build");
    assert.equal(first?.claim.holderId, "agent-1");
    assert.equal(await client.claimNext(taskId, "agent-2", { wait: false }), undefined);
    const waiting = client.claimNext(taskId, "agent-2", { pollMs: 50 });
    await sleep(200);
    await client.tasks.updatePlanItem({ taskId, itemId: "build", holderId: "agent-1", status: PlanItemStatus.COMPLETED });
    const second = await waiting;
    assert.equal(second?.item.id, "push");
    await client.tasks.updatePlanItem({ taskId, itemId: "push", holderId: "agent-2", status: PlanItemStatus.COMPLETED });
    assert.equal(await client.claimNext(taskId, "agent-3"), undefined);
  });

  test("the lease keeper renews past the lease and aborts its signal when another agent takes the item", async () => {
    const { client } = live;
    const { task } = await client.tasks.createTask({ name: "kept", plan: [{ id: "long", title: "A long step" }] });
    const taskId = task!.id;
    // A lease of 3 s, renewed every second: a renewal must be two seconds late before it lapses.
    const claimed = await client.claimNext(taskId, "agent-1", { leaseMs: 3_000 });
    assert.ok(claimed !== undefined);
    const losses: string[] = [];
    const lease = client.keepLease(claimed, { onLost: (holder) => losses.push(holder) });
    try {
      await sleep(7_500); // two and a half leases: held only because it is renewed
      assert.equal(lease.signal.aborted, false);
      assert.ok(timestampMs(claimed.claim.expireTime!) > Date.now());
      assert.equal(await client.claimNext(taskId, "agent-2", { wait: false }), undefined);
      // Just after a renewal, an operator puts the item back and another agent takes it.
      const renewed = timestampMs(claimed.claim.expireTime!);
      while (timestampMs(claimed.claim.expireTime!) === renewed) await sleep(20);
      await client.tasks.updatePlanItem({ taskId, itemId: "long", status: PlanItemStatus.PENDING });
      assert.equal((await client.claimNext(taskId, "agent-2", { leaseMs: 30_000 }))?.item.id, "long");
      await new Promise((resolve) => lease.signal.addEventListener("abort", resolve, { once: true }));
    } finally {
      lease.stop();
    }
    assert.equal(lease.lostTo, "agent-2");
    assert.deepEqual(losses, ["agent-2"]);
  });

  test("release gives the item back at once", async () => {
    const { client } = live;
    const { task } = await client.tasks.createTask({ name: "given back", plan: [{ id: "flaky", title: "Flaky" }] });
    const claimed = await client.claimNext(task!.id, "agent-1");
    assert.ok(claimed !== undefined);
    await client.keepLease(claimed).release();
    assert.equal((await client.claimNext(task!.id, "agent-2", { wait: false }))?.item.id, "flaky");
  });
});
