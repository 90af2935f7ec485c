package taskmem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

func createPlan(ctx context.Context, t *testing.T, client *taskmem.Client, items ...*taskmemv1.PlanItemSpec) string {
	t.Helper()
	created, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Name: "shared plan", Plan: items})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return created.GetTask().GetId()
}

func complete(ctx context.Context, t *testing.T, client *taskmem.Client, taskID, itemID, holder string) {
	t.Helper()
	_, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{TaskId: taskID, ItemId: itemID,
		HolderId: holder, Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_COMPLETED})
	if err != nil {
		t.Fatalf("UpdatePlanItem %s as %s: %v", itemID, holder, err)
	}
}

func TestClaimNextHandsOutReadyItemsWaitsForHeldOnesAndEndsWhenDrained(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	taskID := createPlan(ctx, t, client, &taskmemv1.PlanItemSpec{Id: "build", Title: "Build"},
		&taskmemv1.PlanItemSpec{Id: "push", Title: "Push", DependsOn: []string{"build"}})

	first, err := client.ClaimNext(ctx, taskID, "agent-1", taskmem.WithLease(5*time.Second))
	if err != nil || first.Item.GetId() != "build" || first.Claim.GetHolderId() != "agent-1" {
		t.Fatalf("first claim: %v, %v", first, err)
	}
	if none, err := client.ClaimNext(ctx, taskID, "agent-2", taskmem.WithoutWaiting()); none != nil || err != nil {
		t.Fatalf("push waits on build, yet: %v, %v", none, err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		complete(ctx, t, client, taskID, "build", "agent-1")
	}()
	second, err := client.ClaimNext(ctx, taskID, "agent-2", taskmem.WithPoll(50*time.Millisecond))
	if err != nil || second.Item.GetId() != "push" {
		t.Fatalf("second claim (after build was done): %v, %v", second, err)
	}
	complete(ctx, t, client, taskID, "push", "agent-2")
	if drained, err := client.ClaimNext(ctx, taskID, "agent-3"); drained != nil || err != nil {
		t.Fatalf("a drained plan: %v, %v", drained, err)
	}
}

func TestLeaseRenewsPastItsLengthAndIsCancelledNamingTheNewHolderWhenLost(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	taskID := createPlan(ctx, t, client, &taskmemv1.PlanItemSpec{Id: "long", Title: "A long step"})

	// A lease of 3 s, renewed every second: a renewal must be two seconds late before it lapses.
	claimed, err := client.ClaimNext(ctx, taskID, "agent-1", taskmem.WithLease(3*time.Second))
	if err != nil || claimed == nil {
		t.Fatalf("ClaimNext: %v, %v", claimed, err)
	}
	lease := client.KeepLease(ctx, claimed)
	defer lease.Stop()
	time.Sleep(7500 * time.Millisecond) // two and a half leases: held only because it is renewed
	if lease.Context().Err() != nil || !lease.Claim().GetExpireTime().AsTime().After(time.Now()) {
		t.Fatalf("the lease lapsed while kept: %v", context.Cause(lease.Context()))
	}
	if other, err := client.ClaimNext(ctx, taskID, "agent-2", taskmem.WithoutWaiting()); other != nil || err != nil {
		t.Fatalf("a kept item was handed to another agent: %v, %v", other, err)
	}
	// Just after a renewal, an operator puts the item back and another agent takes it.
	renewed := lease.Claim().GetExpireTime().AsTime()
	for lease.Claim().GetExpireTime().AsTime().Equal(renewed) {
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{TaskId: taskID, ItemId: "long",
		Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_PENDING}); err != nil {
		t.Fatalf("UpdatePlanItem: %v", err)
	}
	if taken, err := client.ClaimNext(ctx, taskID, "agent-2"); err != nil || taken.Item.GetId() != "long" {
		t.Fatalf("agent-2's claim: %v, %v", taken, err)
	}
	select {
	case <-lease.Context().Done():
	case <-time.After(hangGuard): // a hang guard: the loss is noticed at the next renewal
		t.Fatal("the keeper did not notice the loss")
	}
	var lost *taskmem.ClaimLostError
	if !errors.As(context.Cause(lease.Context()), &lost) || lost.Holder != "agent-2" || lost.ItemID != "long" {
		t.Fatalf("cause %v, want the claim lost to agent-2", context.Cause(lease.Context()))
	}
}

func TestReleaseGivesTheItemBackAtOnce(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	taskID := createPlan(ctx, t, client, &taskmemv1.PlanItemSpec{Id: "flaky", Title: "Flaky"})
	claimed, err := client.ClaimNext(ctx, taskID, "agent-1")
	if err != nil || claimed == nil {
		t.Fatalf("ClaimNext: %v, %v", claimed, err)
	}
	if err := client.KeepLease(ctx, claimed).Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	again, err := client.ClaimNext(ctx, taskID, "agent-2", taskmem.WithoutWaiting())
	if err != nil || again.Item.GetId() != "flaky" {
		t.Fatalf("after the release: %v, %v", again, err)
	}
}
