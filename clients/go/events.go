package taskmem

import (
	"context"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// EventsOption configures Client.Events.
type EventsOption func(*eventsConfig)

type eventsConfig struct {
	initial, max time.Duration
	notify       func(err error, delay time.Duration)
	callOptions  []grpc.CallOption
}

// WithBackoff sets how long Events waits before reconnecting: initial after
// the first failure, doubling up to max, each wait jittered down by up to
// half. The defaults are 100ms and 5s. The wait starts again at initial once
// a reconnected stream delivers an event.
func WithBackoff(initial, max time.Duration) EventsOption {
	return func(c *eventsConfig) { c.initial, c.max = initial, max }
}

// WithReconnectNotify calls fn with the error that broke the stream and the
// wait before the next attempt, each time Events is about to reconnect.
func WithReconnectNotify(fn func(err error, delay time.Duration)) EventsOption {
	return func(c *eventsConfig) { c.notify = fn }
}

// WithCallOptions passes gRPC call options to every SubscribeEvents call.
func WithCallOptions(opts ...grpc.CallOption) EventsOption {
	return func(c *eventsConfig) { c.callOptions = append(c.callOptions, opts...) }
}

// Events subscribes to the event stream and yields each event once, in
// cursor order, as a range-over-func iterator:
//
//	for ev, err := range client.Events(ctx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{id}}) {
//		if err != nil {
//			return err // status.Code(err) tells why
//		}
//		handle(ev)
//	}
//
// req.AfterCursor says where to start (0 replays everything, -1 starts live);
// req itself is not modified. When the stream breaks (the server restarts or
// shuts down, the network fails, the server ends a subscriber that read too
// slowly) Events reconnects with capped exponential backoff and resubscribes
// after the cursor of the last event it yielded, so the loop sees no gap and
// no duplicate. Codes retried: those SubscribeEvents' comment in
// task_service.proto lists (UNAVAILABLE, RESOURCE_EXHAUSTED, INTERNAL, ABORTED,
// a CANCELED the caller did not cause), and a stream that ends cleanly.
//
// The iteration ends when the loop breaks, or after yielding one final
// non-nil error: the context's (code CANCELED or DEADLINE_EXCEEDED) when ctx
// ends, or any other error from the server (INVALID_ARGUMENT,
// UNAUTHENTICATED, ...) as it came, readable with status.Code and
// ErrorReason.
//
// With AfterCursor -1, events committed while the stream is broken before
// it delivered its first event are not replayed: the client has no cursor to
// resume from yet.
func (c *Client) Events(ctx context.Context, req *taskmemv1.SubscribeEventsRequest, opts ...EventsOption) iter.Seq2[*taskmemv1.Event, error] {
	cfg := eventsConfig{initial: 100 * time.Millisecond, max: 5 * time.Second}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.initial <= 0 {
		cfg.initial = 100 * time.Millisecond
	}
	if cfg.max < cfg.initial {
		cfg.max = cfg.initial
	}
	return func(yield func(*taskmemv1.Event, error) bool) {
		sub := &subscription{
			tasks:  c.Tasks,
			closed: func() bool { return c.conn.GetState() == connectivity.Shutdown },
			req:    proto.Clone(req).(*taskmemv1.SubscribeEventsRequest),
			cursor: req.GetAfterCursor(),
			cfg:    cfg,
		}
		sub.run(ctx, yield)
	}
}

type subscription struct {
	tasks  taskmemv1.TaskServiceClient
	closed func() bool // the Client was closed
	req    *taskmemv1.SubscribeEventsRequest
	cursor int64 // of the last event yielded, or the start cursor
	cfg    eventsConfig
}

func (s *subscription) run(ctx context.Context, yield func(*taskmemv1.Event, error) bool) {
	delay := s.cfg.initial
	for {
		delivered, stopped, err := s.stream(ctx, yield)
		if stopped {
			return
		}
		if ctx.Err() != nil {
			yield(nil, contextError(ctx))
			return
		}
		if !retryable(err) || s.closed() {
			yield(nil, err)
			return
		}
		if delivered {
			delay = s.cfg.initial
		}
		wait := jitter(delay)
		if s.cfg.notify != nil {
			s.cfg.notify(err, wait)
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			yield(nil, contextError(ctx))
			return
		case <-timer.C:
		}
		delay = min(delay*2, s.cfg.max)
	}
}

// stream runs one SubscribeEvents call from s.cursor until it breaks. It
// reports whether it yielded any event, whether the consumer stopped, and
// the error that ended the stream (nil for a clean end).
func (s *subscription) stream(ctx context.Context, yield func(*taskmemv1.Event, error) bool) (delivered, stopped bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.req.AfterCursor = s.cursor
	stream, err := s.tasks.SubscribeEvents(ctx, s.req, s.cfg.callOptions...)
	if err != nil {
		return false, false, err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return delivered, false, nil
		}
		if err != nil {
			return delivered, false, err
		}
		ev := resp.GetEvent()
		if ev == nil || ev.GetCursor() <= s.cursor {
			continue // never yield an event twice, whatever the server sends
		}
		s.cursor = ev.GetCursor()
		delivered = true
		if !yield(ev, nil) {
			return delivered, true, nil
		}
	}
}

// retryable reports whether a broken stream should be resumed: on the codes
// SubscribeEvents' comment in task_service.proto lists for every client. It is
// only asked while the caller's context is still live, so CANCELED here came
// from the server or the network, not from the caller.
func retryable(err error) bool {
	if err == nil {
		return true // the server ended the stream cleanly; a subscription has no end
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.ResourceExhausted, codes.Internal, codes.Aborted, codes.Canceled:
		return true
	}
	return false
}

func contextError(ctx context.Context) error {
	return status.FromContextError(ctx.Err()).Err()
}

// jitter returns a duration in [d/2, d].
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}
