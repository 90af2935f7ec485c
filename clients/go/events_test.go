package taskmem

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// scriptedTasks answers each SubscribeEvents call with the next script: the
// events to send, then the error that ends the stream. These tests pin the
// iterator's resume rules without a network; the live-server tests cover
// the same behaviour end to end.
type scriptedTasks struct {
	taskmemv1.TaskServiceClient
	scripts  []script
	requests []*taskmemv1.SubscribeEventsRequest
}

type script struct {
	cursors []int64
	end     error // io.EOF for a clean end
}

func (s *scriptedTasks) SubscribeEvents(ctx context.Context, req *taskmemv1.SubscribeEventsRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[taskmemv1.SubscribeEventsResponse], error) {
	s.requests = append(s.requests, &taskmemv1.SubscribeEventsRequest{AfterCursor: req.GetAfterCursor()})
	if len(s.scripts) == 0 {
		return nil, status.Error(codes.FailedPrecondition, "script exhausted")
	}
	next := s.scripts[0]
	s.scripts = s.scripts[1:]
	return &scriptedStream{ctx: ctx, script: next}, nil
}

type scriptedStream struct {
	grpc.ClientStream
	ctx    context.Context
	script script
}

func (s *scriptedStream) Recv() (*taskmemv1.SubscribeEventsResponse, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	if len(s.script.cursors) == 0 {
		return nil, s.script.end
	}
	cursor := s.script.cursors[0]
	s.script.cursors = s.script.cursors[1:]
	return &taskmemv1.SubscribeEventsResponse{Event: &taskmemv1.Event{Cursor: cursor}}, nil
}

func scriptedClient(t *testing.T, scripts ...script) (*Client, *scriptedTasks) {
	conn, err := grpc.NewClient("passthrough:///unused", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	tasks := &scriptedTasks{scripts: scripts}
	return &Client{Tasks: tasks, conn: conn}, tasks
}

func TestEventsResumeAfterTheLastYieldedCursorWithoutDuplicates(t *testing.T) {
	client, tasks := scriptedClient(t,
		script{cursors: []int64{1, 2}, end: status.Error(codes.Unavailable, "server restarting")},
		script{cursors: []int64{2, 3}, end: status.Error(codes.ResourceExhausted, "too slow")},
		script{cursors: []int64{4}, end: io.EOF},
		script{cursors: []int64{5}, end: status.Error(codes.Unauthenticated, "key revoked")},
	)
	req := &taskmemv1.SubscribeEventsRequest{AfterCursor: 0}
	var got []int64
	var final error
	for ev, err := range client.Events(context.Background(), req, WithBackoff(time.Millisecond, time.Millisecond)) {
		if err != nil {
			if final != nil {
				t.Fatalf("second error %v after %v", err, final)
			}
			final = err
			continue
		}
		got = append(got, ev.GetCursor())
	}
	if fmt.Sprint(got) != "[1 2 3 4 5]" {
		t.Errorf("cursors %v, want [1 2 3 4 5]", got)
	}
	if status.Code(final) != codes.Unauthenticated {
		t.Errorf("final error %v, want the Unauthenticated that is not retried", final)
	}
	var after []int64
	for _, r := range tasks.requests {
		after = append(after, r.GetAfterCursor())
	}
	if fmt.Sprint(after) != "[0 2 3 4]" {
		t.Errorf("subscribed after cursors %v, want [0 2 3 4]", after)
	}
	if req.GetAfterCursor() != 0 {
		t.Errorf("the caller's request was modified: after_cursor %d", req.GetAfterCursor())
	}
}

func TestEventsBackoffDoublesUpToTheCapAndResetsAfterProgress(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "down")
	client, _ := scriptedClient(t,
		script{end: unavailable}, script{end: unavailable}, script{end: unavailable}, script{end: unavailable},
		script{cursors: []int64{1}, end: unavailable}, // progress: the next wait starts again at initial
		script{end: status.Error(codes.InvalidArgument, "stop")},
	)
	var delays []time.Duration
	notify := WithReconnectNotify(func(_ error, d time.Duration) { delays = append(delays, d) })
	for range client.Events(context.Background(), &taskmemv1.SubscribeEventsRequest{}, WithBackoff(2*time.Millisecond, 8*time.Millisecond), notify) {
	}
	want := []time.Duration{2, 4, 8, 8, 2} // upper bounds in ms; each wait is in [bound/2, bound]
	if len(delays) != len(want) {
		t.Fatalf("waits %v, want %d of them", delays, len(want))
	}
	for i, d := range delays {
		bound := want[i] * time.Millisecond
		if d < bound/2 || d > bound {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, d, bound/2, bound)
		}
	}
}

func TestEventsOnAClosedClientEndWithAnErrorInsteadOfRetrying(t *testing.T) {
	client, _ := scriptedClient(t,
		script{end: status.Error(codes.Canceled, "grpc: the client connection is closing")},
		script{end: status.Error(codes.Canceled, "grpc: the client connection is closing")},
	)
	_ = client.Close()
	var errs []error
	for _, err := range client.Events(context.Background(), &taskmemv1.SubscribeEventsRequest{}) {
		errs = append(errs, err)
	}
	if len(errs) != 1 || status.Code(errs[0]) != codes.Canceled {
		t.Errorf("yielded %v, want one Canceled error", errs)
	}
}
