package taskmem

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// callLimit is how many unary calls one client keeps at the server at once,
// learned from the server's refusals. A server past capacity refuses a call
// (UNAVAILABLE, ERROR_REASON_OVERLOADED), but a refusal still costs it part of
// a call, and a call reaches the code that refuses it only after waiting in
// gRPC's queue of calls not yet started: a client that keeps sending every
// call keeps that queue full, and far past capacity the calls the server
// accepts waited seconds in it first. So each client limits its own calls in
// flight, as TCP limits its bytes in flight: the limit halves when the server
// refuses a call sent under the current limit, and grows by one for each
// limit's worth of calls that succeed. Calls past the limit wait in the
// client, in order. Unlimited (up to ceiling) until the first refusal.
type callLimit struct {
	mu          sync.Mutex
	ceiling     float64
	floor       float64
	limit       float64
	inFlight    int
	waiting     []chan time.Time
	decreasedAt time.Time
}

func newCallLimit() *callLimit {
	return &callLimit{ceiling: 1024, floor: 1, limit: 1024}
}

// acquire waits for a slot, in arrival order, and returns the time it was
// taken, for release; ctx ending first is the call's error.
func (l *callLimit) acquire(ctx context.Context) (time.Time, error) {
	l.mu.Lock()
	if float64(l.inFlight) < l.limit && len(l.waiting) == 0 {
		l.inFlight++
		l.mu.Unlock()
		return time.Now(), nil
	}
	slot := make(chan time.Time, 1)
	l.waiting = append(l.waiting, slot)
	l.mu.Unlock()
	select {
	case takenAt := <-slot:
		return takenAt, nil
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, waiting := range l.waiting {
		if waiting == slot {
			l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
			return time.Time{}, status.FromContextError(ctx.Err()).Err()
		}
	}
	l.inFlight-- // handed a slot as ctx ended: give it back
	l.wake()
	return time.Time{}, status.FromContextError(ctx.Err()).Err()
}

// release gives the slot back; overloaded: the server refused the call sent
// in it as past capacity.
func (l *callLimit) release(takenAt time.Time, overloaded bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inFlight--
	switch {
	case !overloaded:
		l.limit = min(l.ceiling, l.limit+1/l.limit)
	case !takenAt.Before(l.decreasedAt):
		// Once per round: the calls sent before the last decrease were sent under the old limit.
		l.limit = max(l.floor, min(l.limit, float64(l.inFlight+1))/2)
		l.decreasedAt = time.Now()
	}
	l.wake()
}

func (l *callLimit) wake() {
	for len(l.waiting) > 0 && float64(l.inFlight) < l.limit {
		l.inFlight++
		l.waiting[0] <- time.Now()
		l.waiting = l.waiting[1:]
	}
}

// callLimitInterceptor sends each unary attempt once the client's callLimit allows it.
func callLimitInterceptor(limit *callLimit) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		takenAt, err := limit.acquire(ctx)
		if err != nil {
			return err
		}
		err = invoker(ctx, method, req, reply, cc, opts...)
		limit.release(takenAt, status.Code(err) == codes.Unavailable &&
			ErrorReason(err) == taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED)
		return err
	}
}
