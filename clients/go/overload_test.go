package taskmem_test

import (
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// postConcurrently posts n messages at once and returns each call's error and duration.
func postConcurrently(t *testing.T, client *taskmem.Client, taskID string, n int) ([]error, []time.Duration) {
	t.Helper()
	ctx := testContext(t)
	errs, took := make([]error, n), make([]time.Duration, n)
	// Every goroutine waits at the gate so the n calls leave together even on a loaded machine.
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			started := time.Now()
			_, errs[i] = client.Tasks.PostMessage(ctx, &taskmemv1.PostMessageRequest{TaskId: taskID,
				Role: taskmemv1.MessageRole_MESSAGE_ROLE_AGENT, Content: "busy"})
			took[i] = time.Since(started)
		}()
	}
	close(gate)
	wg.Wait()
	return errs, took
}

func TestAnOverloadedServerRefusesWithUnavailableAndTheClientRetriesAfterItsHint(t *testing.T) {
	t.Setenv("TASKMEM_MAX_IN_FLIGHT_CALLS", "1")
	t.Setenv("TASKMEM_OVERLOAD_RETRY_AFTER_MS", "300")
	srv := startServer(t)
	task := createTask(testContext(t), t, srv.dial(t), "busy")

	// Without retries the refusal itself shows: UNAVAILABLE, ERROR_REASON_OVERLOADED, never CANCELLED.
	errs, _ := postConcurrently(t, srv.dial(t, taskmem.WithRetryPolicy(taskmem.RetryPolicy{Attempts: 1})), task.GetId(), 30)
	refused := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		if status.Code(err) != codes.Unavailable || taskmem.ErrorReason(err) != taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED {
			t.Fatalf("a refused call: got %v, want UNAVAILABLE with ERROR_REASON_OVERLOADED", err)
		}
		refused++
	}
	if refused == 0 {
		t.Fatal("30 calls at once against max_in_flight_calls 1: none was refused")
	}

	// With retries every call succeeds; one refused at least once waited the server's 300 ms, not the
	// client's own 100 ms first backoff.
	retrying := srv.dial(t, taskmem.WithRetryPolicy(taskmem.RetryPolicy{Attempts: 30, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond}))
	errs, took := postConcurrently(t, retrying, task.GetId(), 30)
	slowest := time.Duration(0)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d failed after retries: %v", i, err)
		}
		slowest = max(slowest, took[i])
	}
	if slowest < 300*time.Millisecond {
		t.Fatalf("the slowest call took %v: refused calls did not wait for the server's 300 ms hint", slowest)
	}
}

func TestAfterRefusalsTheClientHoldsCallsPastItsLimitInsteadOfSendingThem(t *testing.T) {
	t.Setenv("TASKMEM_MAX_IN_FLIGHT_CALLS", "4")
	t.Setenv("TASKMEM_OVERLOAD_RETRY_AFTER_MS", "20")
	srv := startServer(t)
	task := createTask(testContext(t), t, srv.dial(t), "bursts")

	// Refused calls in the last three of five bursts of 40 from one client that does not retry.
	refusedOnceLearned := func(policy taskmem.RetryPolicy) int {
		client := srv.dial(t, taskmem.WithRetryPolicy(policy))
		refused := 0
		for burst := range 5 {
			errs, _ := postConcurrently(t, client, task.GetId(), 40)
			for _, err := range errs {
				if err == nil {
					continue
				}
				if taskmem.ErrorReason(err) != taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED {
					t.Fatalf("a refused call: got %v, want ERROR_REASON_OVERLOADED", err)
				}
				if burst >= 2 {
					refused++
				}
			}
		}
		return refused
	}
	unlimited := refusedOnceLearned(taskmem.RetryPolicy{Attempts: 1, UnlimitedCallsInFlight: true})
	limited := refusedOnceLearned(taskmem.RetryPolicy{Attempts: 1})
	t.Logf("refused in bursts 3-5: %d without the limit, %d with it", unlimited, limited)
	// How many the server refuses without the limit depends on the machine's load; with the limit
	// learned, the client sends little beyond it whatever the load: at most 8 of each burst of 40 are refused.
	if unlimited < 30 {
		t.Fatalf("without the limit, bursts of 40 against max_in_flight_calls 4: only %d refused", unlimited)
	}
	if limited > 24 || limited >= unlimited {
		t.Fatalf("with the limit %d calls were refused, without it %d: the limit held too few back", limited, unlimited)
	}
}
