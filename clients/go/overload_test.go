package taskmem_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// These tests judge the client's mechanism against a server that refuses on cue, never how many calls a
// real server refuses: that depends on how fast the machine is at the moment, and a test that counts it
// fails on a busy machine. The one real-server test below holds one call open to make its refusal certain.

// heldCall is one PostMessage at the cue server, waiting for the test to answer it.
type heldCall struct {
	at     time.Time // when it reached the server
	answer chan error
}

func (c heldCall) succeed() { c.answer <- nil }

// refuse answers as the real server does past capacity (server/taskmem/api/admission.py): UNAVAILABLE,
// ErrorInfo ERROR_REASON_OVERLOADED, the hint as RetryInfo and as the grpc-retry-pushback-ms trailer.
func (c heldCall) refuse(hint time.Duration) { c.answer <- overloaded(hint) }

func overloaded(hint time.Duration) error {
	st, err := status.New(codes.Unavailable, "the server is at capacity and did not start this call").WithDetails(
		&errdetails.ErrorInfo{Reason: "ERROR_REASON_OVERLOADED", Domain: "taskmem.dev"},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(hint)})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

// cueServer is an in-test TaskService whose PostMessage calls wait at the server until the test answers each.
type cueServer struct {
	taskmemv1.UnimplementedTaskServiceServer
	calls chan heldCall // every call that reached the server, in order of arrival
	addr  string
}

func (s *cueServer) PostMessage(ctx context.Context, _ *taskmemv1.PostMessageRequest) (*taskmemv1.PostMessageResponse, error) {
	call := heldCall{at: time.Now(), answer: make(chan error, 1)}
	s.calls <- call
	select {
	case err := <-call.answer:
		if err != nil {
			for _, detail := range status.Convert(err).Details() {
				if info, ok := detail.(*errdetails.RetryInfo); ok {
					ms := strconv.FormatInt(info.GetRetryDelay().AsDuration().Milliseconds(), 10)
					_ = grpc.SetTrailer(ctx, metadata.Pairs("grpc-retry-pushback-ms", ms))
				}
			}
			return nil, err
		}
		return &taskmemv1.PostMessageResponse{}, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

func startCueServer(t *testing.T) *cueServer {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &cueServer{calls: make(chan heldCall, 100), addr: listener.Addr().String()}
	server := grpc.NewServer()
	taskmemv1.RegisterTaskServiceServer(server, s)
	go func() { _ = server.Serve(listener) }()
	t.Cleanup(server.Stop)
	return s
}

// next is the next call to reach the server; the deadline only keeps a broken client from hanging the suite.
func (s *cueServer) next(t *testing.T) heldCall {
	t.Helper()
	select {
	case call := <-s.calls:
		return call
	case <-time.After(hangGuard):
		t.Fatal("no call reached the server within the hang guard")
		return heldCall{}
	}
}

// noneSent checks that no further call has reached the server. A held call gives no sign that it is held,
// so this looks after a pause: on a busy machine a call sent wrongly may be missed, never a right one failed.
func (s *cueServer) noneSent(t *testing.T, why string) {
	t.Helper()
	time.Sleep(100 * time.Millisecond)
	if n := len(s.calls); n > 0 {
		t.Fatalf("%d more calls reached the server: %s", n, why)
	}
}

func (s *cueServer) dial(t *testing.T, policy taskmem.RetryPolicy) *taskmem.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	client, err := taskmem.Dial(ctx, s.addr, taskmem.WithRetryPolicy(policy))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// post sends one PostMessage in the background; its error arrives on the returned channel.
func post(t *testing.T, client *taskmem.Client) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := client.Tasks.PostMessage(testContext(t), &taskmemv1.PostMessageRequest{TaskId: "task",
			Role: taskmemv1.MessageRole_MESSAGE_ROLE_AGENT, Content: "busy"})
		done <- err
	}()
	return done
}

func TestAfterARefusalTheClientHoldsCallsPastItsLimitAndLetsThemGoAsTheLimitGrows(t *testing.T) {
	srv := startCueServer(t)
	client := srv.dial(t, taskmem.RetryPolicy{Attempts: 1})

	refused := post(t, client)
	srv.next(t).refuse(300 * time.Millisecond)
	wantCode(t, <-refused, codes.Unavailable, taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED)

	// The refusal halved the limit to its floor: one call at the server at once, the rest held in the client.
	results := []<-chan error{post(t, client), post(t, client), post(t, client), post(t, client)}
	first := srv.next(t)
	srv.noneSent(t, "with a limit of one call in flight after the refusal, three calls should wait in the client")

	// One success grows the limit to two: two of the held calls go, the last still waits.
	first.succeed()
	second, third := srv.next(t), srv.next(t)
	srv.noneSent(t, "with a limit of two calls in flight, the fourth should wait in the client")

	// Another success grows it past two: the last goes.
	second.succeed()
	fourth := srv.next(t)
	third.succeed()
	fourth.succeed()
	for i, result := range results {
		if err := <-result; err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

func TestWithoutTheLimitTheClientSendsEveryCallEvenAfterARefusal(t *testing.T) {
	srv := startCueServer(t)
	client := srv.dial(t, taskmem.RetryPolicy{Attempts: 1, UnlimitedCallsInFlight: true})

	refused := post(t, client)
	srv.next(t).refuse(300 * time.Millisecond)
	wantCode(t, <-refused, codes.Unavailable, taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED)

	results := []<-chan error{post(t, client), post(t, client), post(t, client), post(t, client)}
	held := []heldCall{srv.next(t), srv.next(t), srv.next(t), srv.next(t)} // all four at the server at once
	for _, call := range held {
		call.succeed()
	}
	for i, result := range results {
		if err := <-result; err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
}

func TestARefusedCallIsRetriedNoSoonerThanTheServersHint(t *testing.T) {
	srv := startCueServer(t)
	// The client's own backoff is 1-2 ms; the server asks for 300 ms.
	client := srv.dial(t, taskmem.RetryPolicy{Attempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})

	result := post(t, client)
	srv.next(t).refuse(300 * time.Millisecond)
	refusedAt := time.Now() // before the client can have read the refusal
	retry := srv.next(t)
	// A lower bound only: a busy machine makes the retry later, never sooner.
	if waited := retry.at.Sub(refusedAt); waited < 300*time.Millisecond {
		t.Fatalf("the retry reached the server %v after the refusal: it did not wait for the server's 300 ms hint", waited)
	}
	retry.succeed()
	if err := <-result; err != nil {
		t.Fatalf("the retried call: %v", err)
	}
}

// heldModel is an OpenAI-compatible endpoint that answers only once released: a call that asks it stays at the server.
func heldModel(t *testing.T) (url string, asked <-chan struct{}, release func()) {
	t.Helper()
	askedCh, released := make(chan struct{}, 10), make(chan struct{})
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		askedCh <- struct{}{}
		select {
		case <-released:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"choices":[{"message":{"role":"assistant","content":"Deploy next."}}]}`))
	}))
	closeOnce := func() {
		select {
		case <-released:
		default:
			close(released)
		}
	}
	t.Cleanup(func() { closeOnce(); model.Close() })
	return model.URL + "/v1", askedCh, closeOnce
}

func TestTheRealServerPastCapacityRefusesWithUnavailableOverloadedAndItsRetryHint(t *testing.T) {
	modelURL, asked, release := heldModel(t)
	t.Setenv("TASKMEM_MAX_IN_FLIGHT_CALLS", "1")
	t.Setenv("TASKMEM_OVERLOAD_RETRY_AFTER_MS", "300")
	t.Setenv("TASKMEM_LLM_BASE_URL", modelURL)
	t.Setenv("TASKMEM_LLM_MODEL", "scripted")
	t.Setenv("TASKMEM_LLM_RETRIES", "0")
	srv := startServer(t)
	client := srv.dial(t, taskmem.WithRetryPolicy(taskmem.RetryPolicy{Attempts: 1}))
	ctx := testContext(t)
	task := createTask(ctx, t, client, "busy")

	// The server's one slot is taken by a QueryTask held at the model.
	query := make(chan error, 1)
	go func() {
		_, err := client.State.QueryTask(ctx, &taskmemv1.QueryTaskRequest{TaskId: task.GetId(), Question: "what next?"})
		query <- err
	}()
	select {
	case <-asked:
	case <-time.After(hangGuard):
		t.Fatal("QueryTask did not reach the model within the hang guard")
	}

	var trailer metadata.MD
	_, err := client.Tasks.PostMessage(ctx, &taskmemv1.PostMessageRequest{TaskId: task.GetId(),
		Role: taskmemv1.MessageRole_MESSAGE_ROLE_AGENT, Content: "busy"}, grpc.Trailer(&trailer))
	wantCode(t, err, codes.Unavailable, taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED)
	if got := trailer.Get("grpc-retry-pushback-ms"); len(got) != 1 || got[0] != "300" {
		t.Fatalf("grpc-retry-pushback-ms = %v, want [300]", got)
	}
	hint := time.Duration(0)
	for _, detail := range status.Convert(err).Details() {
		if info, ok := detail.(*errdetails.RetryInfo); ok {
			hint = info.GetRetryDelay().AsDuration()
		}
	}
	if hint != 300*time.Millisecond {
		t.Fatalf("RetryInfo.retry_delay = %v, want 300ms", hint)
	}

	release()
	if err := <-query; err != nil {
		t.Fatalf("the held QueryTask: %v", err)
	}
}
