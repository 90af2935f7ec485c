package taskmem

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// DefaultLease is how long a claim lasts unless renewed, as the server's default.
const DefaultLease = 30 * time.Second

// ClaimedItem is a plan item ClaimPlanItem handed to this holder, and the lease on it.
type ClaimedItem struct {
	Item  *taskmemv1.PlanItem
	Claim *taskmemv1.PlanItemClaim
	Lease time.Duration // as asked for
}

type claimOptions struct {
	lease     time.Duration
	itemID    string
	stages    []string
	toolNames []string
	poll      time.Duration
	noWait    bool
}

// ClaimOption narrows or tunes ClaimNext.
type ClaimOption func(*claimOptions)

// WithLease sets how long the claim lasts unless renewed (1 s to 1 hour; default 30 s).
func WithLease(d time.Duration) ClaimOption { return func(o *claimOptions) { o.lease = d } }

// WithItem claims this item and no other.
func WithItem(itemID string) ClaimOption { return func(o *claimOptions) { o.itemID = itemID } }

// WithStages claims only an item of one of these stages.
func WithStages(stages ...string) ClaimOption { return func(o *claimOptions) { o.stages = stages } }

// WithToolNames claims only an item expecting one of these tools.
func WithToolNames(tools ...string) ClaimOption { return func(o *claimOptions) { o.toolNames = tools } }

// WithPoll sets how often ClaimNext asks again while it waits (default 500 ms).
func WithPoll(d time.Duration) ClaimOption { return func(o *claimOptions) { o.poll = d } }

// WithoutWaiting makes ClaimNext return (nil, nil) at once when no item is
// ready, instead of asking again until one is.
func WithoutWaiting() ClaimOption { return func(o *claimOptions) { o.noWait = true } }

// ClaimNext claims the next ready item of the task's plan for holderID. It
// returns (nil, nil) once nothing matching is left (every matching item done
// or failed); while matching items remain but none is ready (held by other
// agents, or waiting on dependencies) it asks again until one is, or until
// ctx ends.
func (c *Client) ClaimNext(ctx context.Context, taskID, holderID string, opts ...ClaimOption) (*ClaimedItem, error) {
	o := claimOptions{lease: DefaultLease, poll: 500 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	req := &taskmemv1.ClaimPlanItemRequest{TaskId: taskID, HolderId: holderID, Lease: durationpb.New(o.lease),
		ItemId: o.itemID, Stages: o.stages, ToolNames: o.toolNames}
	for {
		resp, err := c.Tasks.ClaimPlanItem(ctx, req)
		if err != nil {
			return nil, err
		}
		if resp.GetItem() != nil {
			return &ClaimedItem{Item: resp.GetItem(), Claim: resp.GetClaim(), Lease: o.lease}, nil
		}
		if resp.GetRemainingCount() == 0 || o.noWait {
			return nil, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(o.poll):
		}
	}
}

// ClaimLostError is the cause of a Lease's context when the claim was lost.
type ClaimLostError struct {
	ItemID string
	// Holder holds the item now; "" for nobody (the lease ran out, or the
	// item was finished or put back by someone else).
	Holder string
}

func (e *ClaimLostError) Error() string {
	holder := e.Holder
	if holder == "" {
		holder = "nobody"
	}
	return fmt.Sprintf("taskmem: the claim of plan item %q was lost (now held by %s)", e.ItemID, holder)
}

// Lease keeps a claim: it renews it every third of its lease in the
// background until Stop, or until the claim is lost — the server refused a
// renewal (ERROR_REASON_CLAIM_NOT_HELD) or none succeeded before the lease
// ran out. On loss its Context is cancelled with a *ClaimLostError cause
// (context.Cause) and renewing stops: stop working on the item, since
// UpdatePlanItem with this holder id will be refused.
type Lease struct {
	tasks   taskmemv1.TaskServiceClient
	ctx     context.Context
	cancel  context.CancelCauseFunc
	stopped chan struct{}
	done    chan struct{}
	once    sync.Once

	mu      sync.Mutex
	claimed *ClaimedItem
}

// KeepLease starts renewing claimed's lease. The Lease's Context derives from
// ctx; cancelling ctx stops the renewals too.
func (c *Client) KeepLease(ctx context.Context, claimed *ClaimedItem) *Lease {
	leaseCtx, cancel := context.WithCancelCause(ctx)
	l := &Lease{tasks: c.Tasks, ctx: leaseCtx, cancel: cancel, stopped: make(chan struct{}),
		done: make(chan struct{}), claimed: claimed}
	go l.renew()
	return l
}

// Context is cancelled when the claim is lost (cause: *ClaimLostError), when
// the parent context ends, or at Stop.
func (l *Lease) Context() context.Context { return l.ctx }

// Claim is the claim as the server last said (its expire time moves on at
// every renewal).
func (l *Lease) Claim() *taskmemv1.PlanItemClaim {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claimed.Claim
}

// Lost reports the loss, if the claim was lost.
func (l *Lease) Lost() (*ClaimLostError, bool) {
	lost, ok := context.Cause(l.ctx).(*ClaimLostError)
	return lost, ok
}

// Stop stops renewing and waits for the renewal goroutine to end; the claim
// stays until its lease ends or the item is finished.
func (l *Lease) Stop() {
	l.once.Do(func() { close(l.stopped) })
	<-l.done
	l.cancel(context.Canceled)
}

// Release stops renewing and gives the item back at once (ReleaseClaim), for
// another agent to take. Nothing is sent when the claim was already lost.
func (l *Lease) Release(ctx context.Context) error {
	l.Stop()
	if _, lost := l.Lost(); lost {
		return nil
	}
	claim := l.Claim()
	_, err := l.tasks.ReleaseClaim(ctx, &taskmemv1.ReleaseClaimRequest{TaskId: claim.GetTaskId(),
		ItemId: claim.GetItemId(), HolderId: claim.GetHolderId()})
	return err
}

func (l *Lease) renew() {
	defer close(l.done)
	every := l.claimed.Lease / 3
	claim := l.Claim()
	req := &taskmemv1.RenewClaimRequest{TaskId: claim.GetTaskId(), ItemId: claim.GetItemId(),
		HolderId: claim.GetHolderId(), Lease: durationpb.New(l.claimed.Lease)}
	for {
		select {
		case <-l.stopped:
			return
		case <-l.ctx.Done():
			return
		case <-time.After(every):
		}
		callCtx, cancel := context.WithTimeout(l.ctx, every)
		resp, err := l.tasks.RenewClaim(callCtx, req)
		cancel()
		switch {
		case err == nil:
			l.mu.Lock()
			l.claimed.Claim = resp.GetClaim()
			l.mu.Unlock()
		case ErrorReason(err) == taskmemv1.ErrorReason_ERROR_REASON_CLAIM_NOT_HELD:
			l.cancel(&ClaimLostError{ItemID: claim.GetItemId(), Holder: ErrorInfo(err).GetMetadata()["holder_id"]})
			return
		case !time.Now().Before(l.Claim().GetExpireTime().AsTime()):
			// Unreachable until the lease ran out: assume another agent may hold it now.
			l.cancel(&ClaimLostError{ItemID: claim.GetItemId()})
			return
		}
	}
}
