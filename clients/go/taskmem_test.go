package taskmem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	t.Cleanup(cancel)
	return ctx
}

func deployPlan() []*taskmemv1.PlanItemSpec {
	input, _ := structpb.NewStruct(map[string]any{"tag": "app:1.2"})
	return []*taskmemv1.PlanItemSpec{
		{Id: "build", Stage: "1", Title: "Build the image", ToolName: "docker", Input: input},
		{Id: "push", Stage: "1", Title: "Push the image", DependsOn: []string{"build"}},
		{Id: "deploy", Stage: "2", Title: "Deploy to staging", DependsOn: []string{"push"}},
	}
}

func createTask(ctx context.Context, t *testing.T, client *taskmem.Client, name string) *taskmemv1.Task {
	t.Helper()
	resp, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Name: name, Goal: "ship it", Plan: deployPlan()})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return resp.GetTask()
}

func wantCode(t *testing.T, err error, code codes.Code, reason taskmemv1.ErrorReason) {
	t.Helper()
	if got := status.Code(err); got != code {
		t.Fatalf("status.Code(err) = %v, want %v (err: %v)", got, code, err)
	}
	if got := taskmem.ErrorReason(err); got != reason {
		t.Fatalf("ErrorReason(err) = %v, want %v (err: %v)", got, reason, err)
	}
}

func TestTaskFlowRecordsPlanActionsAndAnswersWhereWasI(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)

	// A retried CreateTask with the same request_id returns the same task.
	create := &taskmemv1.CreateTaskRequest{Name: "deploy app", Goal: "deploy v1.2 to staging", Plan: deployPlan(), RequestId: "create-1"}
	created, err := client.Tasks.CreateTask(ctx, create)
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	again, err := client.Tasks.CreateTask(ctx, create)
	if err != nil {
		t.Fatalf("CreateTask retry: %v", err)
	}
	task := created.GetTask()
	if again.GetTask().GetId() != task.GetId() {
		t.Errorf("retry with the same request_id made task %q, first was %q", again.GetTask().GetId(), task.GetId())
	}
	if task.GetStatus() != taskmemv1.TaskStatus_TASK_STATUS_PENDING || created.GetPlan().GetVersion() != 1 {
		t.Errorf("new task: status %v plan version %d, want PENDING and 1", task.GetStatus(), created.GetPlan().GetVersion())
	}

	got, err := client.Tasks.GetTask(ctx, &taskmemv1.GetTaskRequest{TaskId: task.GetId()})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	if n := len(got.GetPlan().GetItems()); n != 3 || got.GetTask().GetName() != "deploy app" {
		t.Fatalf("GetTask: name %q with %d plan items, want \"deploy app\" with 3", got.GetTask().GetName(), n)
	}

	updated, err := client.Tasks.UpdateTask(ctx, &taskmemv1.UpdateTaskRequest{
		Task: &taskmemv1.Task{Id: task.GetId(), Status: taskmemv1.TaskStatus_TASK_STATUS_PLANNING, Etag: got.GetTask().GetEtag()},
	})
	if err != nil {
		t.Fatalf("UpdateTask to PLANNING: %v", err)
	}
	_, err = client.Tasks.UpdateTask(ctx, &taskmemv1.UpdateTaskRequest{
		Task: &taskmemv1.Task{Id: task.GetId(), Status: taskmemv1.TaskStatus_TASK_STATUS_EXECUTING, Etag: got.GetTask().GetEtag()},
	})
	wantCode(t, err, codes.Aborted, taskmemv1.ErrorReason_ERROR_REASON_STALE_ETAG)
	if _, err := client.Tasks.UpdateTask(ctx, &taskmemv1.UpdateTaskRequest{
		Task: &taskmemv1.Task{Id: task.GetId(), Status: taskmemv1.TaskStatus_TASK_STATUS_EXECUTING, Etag: updated.GetTask().GetEtag()},
	}); err != nil {
		t.Fatalf("UpdateTask to EXECUTING with the current etag: %v", err)
	}

	if _, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{
		TaskId: task.GetId(), ItemId: "build", Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_IN_PROGRESS,
	}); err != nil {
		t.Fatalf("UpdatePlanItem build IN_PROGRESS: %v", err)
	}
	input, _ := structpb.NewStruct(map[string]any{"cmd": "docker build -t app:1.2 ."})
	action, err := client.Tasks.RecordAction(ctx, &taskmemv1.RecordActionRequest{
		TaskId: task.GetId(), PlanItemId: "build", Type: taskmemv1.ActionType_ACTION_TYPE_CLI,
		ToolName: "docker", Summary: "docker build", Input: input,
	})
	if err != nil {
		t.Fatalf("RecordAction: %v", err)
	}
	if action.GetAction().GetStatus() != taskmemv1.ActionStatus_ACTION_STATUS_RUNNING {
		t.Errorf("recorded action status %v, want RUNNING", action.GetAction().GetStatus())
	}
	logResp, err := client.Tasks.AppendActionLog(ctx, &taskmemv1.AppendActionLogRequest{
		ActionId: action.GetAction().GetId(),
		Lines:    []*taskmemv1.LogLineInput{{Content: "Step 1/4"}, {Content: "Step 2/4"}},
	})
	if err != nil {
		t.Fatalf("AppendActionLog: %v", err)
	}
	if logResp.GetFirstSequence() != 1 || logResp.GetLastSequence() != 2 {
		t.Errorf("AppendActionLog sequences %d..%d, want 1..2", logResp.GetFirstSequence(), logResp.GetLastSequence())
	}
	output, _ := structpb.NewStruct(map[string]any{"image": "app:1.2"})
	if _, err := client.Tasks.CompleteAction(ctx, &taskmemv1.CompleteActionRequest{
		ActionId: action.GetAction().GetId(), Status: taskmemv1.ActionStatus_ACTION_STATUS_SUCCEEDED, Output: output,
	}); err != nil {
		t.Fatalf("CompleteAction: %v", err)
	}
	_, err = client.Tasks.CompleteAction(ctx, &taskmemv1.CompleteActionRequest{
		ActionId: action.GetAction().GetId(), Status: taskmemv1.ActionStatus_ACTION_STATUS_SUCCEEDED,
	})
	wantCode(t, err, codes.FailedPrecondition, taskmemv1.ErrorReason_ERROR_REASON_FAILED_PRECONDITION)

	summary := "image app:1.2 built"
	item, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{
		TaskId: task.GetId(), ItemId: "build", Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_COMPLETED, Summary: &summary,
	})
	if err != nil {
		t.Fatalf("UpdatePlanItem build COMPLETED: %v", err)
	}
	if item.GetItem().GetSummary() != summary || item.GetItem().GetCompleteTime() == nil {
		t.Errorf("completed item: summary %q complete_time %v", item.GetItem().GetSummary(), item.GetItem().GetCompleteTime())
	}
	if _, err := client.Tasks.PostMessage(ctx, &taskmemv1.PostMessageRequest{
		TaskId: task.GetId(), Role: taskmemv1.MessageRole_MESSAGE_ROLE_AGENT,
		Kind: taskmemv1.MessageKind_MESSAGE_KIND_PROGRESS, Content: "image built, pushing next",
	}); err != nil {
		t.Fatalf("PostMessage: %v", err)
	}

	progress, err := client.Tasks.GetProgress(ctx, &taskmemv1.GetProgressRequest{TaskId: task.GetId()})
	if err != nil {
		t.Fatalf("GetProgress: %v", err)
	}
	if ids := itemIDs(progress.GetCompleted()); ids != "build" {
		t.Errorf("progress completed = [%s], want [build]", ids)
	}
	if ids := itemIDs(progress.GetNext()); ids != "push" {
		t.Errorf("progress next = [%s], want [push]", ids)
	}
	if progress.GetCurrent() != nil || progress.GetTotalItems() != 3 {
		t.Errorf("progress current %v total %d, want none and 3", progress.GetCurrent(), progress.GetTotalItems())
	}
	if n := len(progress.GetRecentMessages()); n == 0 || progress.GetSummary() == "" {
		t.Errorf("progress has %d recent messages and summary %q", n, progress.GetSummary())
	}

	actions, err := client.Tasks.ListActions(ctx, &taskmemv1.ListActionsRequest{TaskId: task.GetId()})
	if err != nil {
		t.Fatalf("ListActions: %v", err)
	}
	if n := len(actions.GetActions()); n != 1 || actions.GetActions()[0].GetStatus() != taskmemv1.ActionStatus_ACTION_STATUS_SUCCEEDED {
		t.Errorf("ListActions: %v, want one SUCCEEDED action", actions.GetActions())
	}

	_, err = client.Tasks.GetTask(ctx, &taskmemv1.GetTaskRequest{TaskId: "tsk_does_not_exist"})
	wantCode(t, err, codes.NotFound, taskmemv1.ErrorReason_ERROR_REASON_NOT_FOUND)
}

func itemIDs(items []*taskmemv1.PlanItem) string {
	ids := make([]string, len(items))
	for i, item := range items {
		ids[i] = item.GetId()
	}
	return strings.Join(ids, ",")
}

func TestEventsReplayHistoryThenLiveEventsInCursorOrder(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	task := createTask(ctx, t, client, "watched")

	var types []taskmemv1.EventType
	var last int64
	for ev, err := range client.Events(ctx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{task.GetId()}}) {
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		if ev.GetCursor() <= last {
			t.Fatalf("cursor %d after %d", ev.GetCursor(), last)
		}
		last = ev.GetCursor()
		types = append(types, ev.GetType())
		if len(types) == 2 { // the replayed history; now one live event
			if _, err := client.Tasks.PostMessage(ctx, &taskmemv1.PostMessageRequest{
				TaskId: task.GetId(), Role: taskmemv1.MessageRole_MESSAGE_ROLE_USER, Content: "status?",
			}); err != nil {
				t.Fatalf("PostMessage: %v", err)
			}
		}
		if len(types) == 3 {
			break
		}
	}
	want := []taskmemv1.EventType{
		taskmemv1.EventType_EVENT_TYPE_TASK_CREATED,
		taskmemv1.EventType_EVENT_TYPE_PLAN_REPLACED,
		taskmemv1.EventType_EVENT_TYPE_MESSAGE_POSTED,
	}
	if fmt.Sprint(types) != fmt.Sprint(want) {
		t.Errorf("event types %v, want %v", types, want)
	}
	// The client still works after the consumer broke out of the loop.
	if _, err := client.Tasks.GetTask(ctx, &taskmemv1.GetTaskRequest{TaskId: task.GetId()}); err != nil {
		t.Errorf("GetTask after break: %v", err)
	}
}

func TestCancellingTheContextEndsTheEventsLoopPromptly(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	task := createTask(testContext(t), t, client, "cancelled watch")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled atomic.Bool
	var events int
	var final error
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for ev, err := range client.Events(ctx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{task.GetId()}}) {
			if err != nil {
				final = err
				continue // the iterator must end by itself after a final error
			}
			events++
			if ev.GetType() == taskmemv1.EventType_EVENT_TYPE_PLAN_REPLACED {
				// History is replayed; the stream now waits for live events.
				time.AfterFunc(200*time.Millisecond, func() { cancelled.Store(true); cancel() })
			}
		}
	}()
	// Only a hang guard: a loop that ignored the cancellation would retry for ever.
	select {
	case <-ended:
	case <-time.After(hangGuard):
		t.Fatal("the events loop did not end within the hang guard of its context being cancelled")
	}
	if !cancelled.Load() {
		t.Fatalf("loop ended before cancel; final error %v", final)
	}
	if status.Code(final) != codes.Canceled {
		t.Errorf("final error %v, want code Canceled", final)
	}
	if events != 2 {
		t.Errorf("got %d events, want 2", events)
	}
}

func TestDeadlineExpiresOnCallsAndStreamsThatCannotFinishInTime(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	task := createTask(ctx, t, client, "slow")

	t.Run("events subscription", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		var final error
		for _, err := range client.Events(ctx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{task.GetId()}, AfterCursor: -1}) {
			if err != nil {
				final = err
			}
		}
		if status.Code(final) != codes.DeadlineExceeded {
			t.Errorf("final error %v, want code DeadlineExceeded", final)
		}
		// Not sooner than the deadline (a busy machine can only make it later, so no upper bound).
		if elapsed := time.Since(start); elapsed < 450*time.Millisecond {
			t.Errorf("ended after %v, before its 500ms deadline", elapsed)
		}
	})

	t.Run("tail of a running action", func(t *testing.T) {
		action, err := client.Tasks.RecordAction(ctx, &taskmemv1.RecordActionRequest{TaskId: task.GetId(), Summary: "long build"})
		if err != nil {
			t.Fatalf("RecordAction: %v", err)
		}
		if _, err := client.Tasks.AppendActionLog(ctx, &taskmemv1.AppendActionLogRequest{
			ActionId: action.GetAction().GetId(), Lines: []*taskmemv1.LogLineInput{{Content: "compiling"}},
		}); err != nil {
			t.Fatalf("AppendActionLog: %v", err)
		}
		tailCtx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		stream, err := client.Tasks.TailActionLog(tailCtx, &taskmemv1.TailActionLogRequest{ActionId: action.GetAction().GetId()})
		if err != nil {
			t.Fatalf("TailActionLog: %v", err)
		}
		first, err := stream.Recv()
		if err != nil || first.GetLine().GetContent() != "compiling" {
			t.Fatalf("first line %v, %v", first, err)
		}
		_, err = stream.Recv() // the action never completes
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("Recv after the deadline: %v, want code DeadlineExceeded", err)
		}
	})

	t.Run("unary call", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, time.Microsecond)
		defer cancel()
		time.Sleep(time.Millisecond)
		_, err := client.Tasks.GetProgress(ctx, &taskmemv1.GetProgressRequest{TaskId: task.GetId()})
		if status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("GetProgress: %v, want code DeadlineExceeded", err)
		}
	})
}

func TestEventsResumeAcrossServerRestartDeliveringEachEventOnce(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	task := createTask(ctx, t, client, "survives restarts")

	post := func(content string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(ctx, hangGuard)
		defer cancel()
		if _, err := client.Tasks.PostMessage(ctx, &taskmemv1.PostMessageRequest{
			TaskId: task.GetId(), Role: taskmemv1.MessageRole_MESSAGE_ROLE_AGENT, Content: content,
		}, grpc.WaitForReady(true)); err != nil {
			t.Fatalf("PostMessage %q: %v", content, err)
		}
	}
	post("before restart 1")
	post("before restart 2")

	var mu sync.Mutex
	var breaks []error
	received := make(chan *taskmemv1.Event, 100)
	subCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for ev, err := range client.Events(subCtx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{task.GetId()}},
			taskmem.WithBackoff(50*time.Millisecond, 500*time.Millisecond),
			taskmem.WithReconnectNotify(func(err error, _ time.Duration) {
				mu.Lock()
				breaks = append(breaks, err)
				mu.Unlock()
			})) {
			if err != nil {
				done <- err
				return
			}
			received <- ev
		}
	}()

	var got []*taskmemv1.Event
	await := func(n int) {
		t.Helper()
		timeout := time.After(hangGuard)
		for len(got) < n {
			select {
			case ev := <-received:
				got = append(got, ev)
			case err := <-done:
				t.Fatalf("events loop ended after %d events: %v", len(got), err)
			case <-timeout:
				t.Fatalf("received %d events, want %d", len(got), n)
			}
		}
	}
	await(4) // TASK_CREATED, PLAN_REPLACED, 2 × MESSAGE_POSTED

	srv.restart()
	post("after restart 1")
	post("after restart 2")
	post("after restart 3")
	await(7)
	srv.restart() // a second time, with the subscriber already resumed once
	post("after second restart")
	await(8)

	select { // nothing more: no duplicate arrives late
	case ev := <-received:
		t.Errorf("unexpected extra event %d %v", ev.GetCursor(), ev.GetType())
	case <-time.After(500 * time.Millisecond):
	}
	stop()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Errorf("final error after cancel: %v, want code Canceled", err)
	}

	stored, err := client.Tasks.ListEvents(ctx, &taskmemv1.ListEventsRequest{TaskIds: []string{task.GetId()}, PageSize: 500})
	if err != nil {
		t.Fatalf("ListEvents: %v", err)
	}
	if cursors(got) != cursors(stored.GetEvents()) {
		t.Errorf("streamed cursors %s, stored %s", cursors(got), cursors(stored.GetEvents()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(breaks) < 2 {
		t.Errorf("the subscription reconnected %d times, want at least 2 (one per restart)", len(breaks))
	}
	for i, err := range breaks {
		t.Logf("stream break %d: %v", i+1, err)
	}
	// The contract: "The stream ends with UNAVAILABLE when the server shuts down".
	if len(breaks) > 0 && status.Code(breaks[0]) != codes.Unavailable {
		t.Errorf("stream broken by server shutdown with %v, want code Unavailable", breaks[0])
	}
}

func cursors(events []*taskmemv1.Event) string {
	parts := make([]string, len(events))
	for i, ev := range events {
		parts[i] = fmt.Sprint(ev.GetCursor())
	}
	return strings.Join(parts, ",")
}

func TestMissingOrWrongTokenIsUnauthenticated(t *testing.T) {
	srv := startServer(t, "--api-key", "secret")
	ctx := testContext(t)
	request := &taskmemv1.CreateTaskRequest{Name: "guarded"}

	t.Run("no token", func(t *testing.T) {
		_, err := srv.dial(t).Tasks.CreateTask(ctx, request)
		wantCode(t, err, codes.Unauthenticated, taskmemv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
	})
	t.Run("wrong token", func(t *testing.T) {
		_, err := srv.dial(t, taskmem.WithToken("guess")).Tasks.CreateTask(ctx, request)
		wantCode(t, err, codes.Unauthenticated, taskmemv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
	})
	t.Run("wrong token on a subscription is yielded once and not retried", func(t *testing.T) {
		var errs []error
		for ev, err := range srv.dial(t, taskmem.WithToken("guess")).Events(ctx, &taskmemv1.SubscribeEventsRequest{}) {
			if ev != nil {
				t.Errorf("unexpected event %v", ev)
			}
			errs = append(errs, err)
		}
		if len(errs) != 1 {
			t.Fatalf("iteration yielded %d errors %v, want 1", len(errs), errs)
		}
		wantCode(t, errs[0], codes.Unauthenticated, taskmemv1.ErrorReason_ERROR_REASON_UNAUTHENTICATED)
	})
	t.Run("right token", func(t *testing.T) {
		resp, err := srv.dial(t, taskmem.WithToken("secret")).Tasks.CreateTask(ctx, request)
		if err != nil {
			t.Fatalf("CreateTask with the right token: %v", err)
		}
		if ns := resp.GetTask().GetNamespace(); ns != "default" {
			t.Errorf("namespace %q, want the key's first namespace \"default\"", ns)
		}
	})
}

func TestNamespaceOptionScopesEveryCall(t *testing.T) {
	srv := startServer(t, "--api-key", "secret:alpha,beta")
	ctx := testContext(t)
	alpha := srv.dial(t, taskmem.WithToken("secret"), taskmem.WithNamespace("alpha"))
	beta := srv.dial(t, taskmem.WithToken("secret"), taskmem.WithNamespace("beta"))

	task := createTask(ctx, t, alpha, "in alpha")
	if task.GetNamespace() != "alpha" {
		t.Errorf("task namespace %q, want alpha", task.GetNamespace())
	}
	_, err := beta.Tasks.GetTask(ctx, &taskmemv1.GetTaskRequest{TaskId: task.GetId()})
	wantCode(t, err, codes.NotFound, taskmemv1.ErrorReason_ERROR_REASON_NOT_FOUND)

	gamma := srv.dial(t, taskmem.WithToken("secret"), taskmem.WithNamespace("gamma"))
	_, err = gamma.Tasks.GetTask(ctx, &taskmemv1.GetTaskRequest{TaskId: task.GetId()})
	wantCode(t, err, codes.PermissionDenied, taskmemv1.ErrorReason_ERROR_REASON_NAMESPACE_DENIED)
}

func TestBadFieldIsInvalidArgumentNamingTheField(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)

	t.Run("missing name", func(t *testing.T) {
		_, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Goal: "no name"})
		wantCode(t, err, codes.InvalidArgument, taskmemv1.ErrorReason_ERROR_REASON_INVALID_FIELD)
		if field := taskmem.ErrorField(err); field != "name" {
			t.Errorf("ErrorField = %q, want \"name\"", field)
		}
		info := taskmem.ErrorInfo(fmt.Errorf("creating: %w", err)) // still readable when wrapped
		if info.GetDomain() != taskmem.ErrorDomain || info.GetReason() != "ERROR_REASON_INVALID_FIELD" {
			t.Errorf("ErrorInfo of the wrapped error = %v", info)
		}
	})
	t.Run("unknown dependency", func(t *testing.T) {
		_, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Name: "bad plan", Plan: []*taskmemv1.PlanItemSpec{
			{Id: "a", Title: "A"}, {Id: "b", Title: "B", DependsOn: []string{"nope"}},
		}})
		wantCode(t, err, codes.InvalidArgument, taskmemv1.ErrorReason_ERROR_REASON_PLAN_UNKNOWN_DEPENDENCY)
		if field := taskmem.ErrorField(err); !strings.HasPrefix(field, "plan[1]") {
			t.Errorf("ErrorField = %q, want plan[1]…", field)
		}
	})
	t.Run("summary over 100 characters", func(t *testing.T) {
		task := createTask(ctx, t, client, "summaries")
		long := strings.Repeat("x", 101)
		_, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{TaskId: task.GetId(), ItemId: "build", Summary: &long})
		if status.Code(err) != codes.InvalidArgument || taskmem.ErrorField(err) != "summary" {
			t.Errorf("UpdatePlanItem: code %v field %q, want InvalidArgument naming \"summary\" (err: %v)",
				status.Code(err), taskmem.ErrorField(err), err)
		}
	})
	t.Run("bad subscription is yielded once", func(t *testing.T) {
		var errs []error
		for _, err := range client.Events(ctx, &taskmemv1.SubscribeEventsRequest{AfterCursor: -2}) {
			errs = append(errs, err)
		}
		if len(errs) != 1 || status.Code(errs[0]) != codes.InvalidArgument || taskmem.ErrorField(errs[0]) != "after_cursor" {
			t.Errorf("Events yielded %v, want one InvalidArgument naming after_cursor", errs)
		}
	})
}

func TestDialFailsFastWhenNothingListens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	// Failing fast shows in the error: a Dial that waited for the context would end DeadlineExceeded.
	_, err := taskmem.Dial(ctx, "127.0.0.1:1")
	if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Dial: %v, want code Unavailable saying the connection was refused", err)
	}
}

func TestDialRefusesToSendATokenInPlaintextToARemoteHost(t *testing.T) {
	_, err := taskmem.Dial(context.Background(), "taskmem.example.com:443", taskmem.WithToken("secret"), taskmem.WithLazyConnect())
	if err == nil || !strings.Contains(err.Error(), "plaintext") {
		t.Errorf("Dial: %v, want a refusal to send the token in plaintext", err)
	}
	client, err := taskmem.Dial(context.Background(), "taskmem.example.com:443", taskmem.WithToken("secret"),
		taskmem.WithLazyConnect(), taskmem.WithInsecureTransport())
	if err != nil {
		t.Fatalf("Dial with WithInsecureTransport: %v", err)
	}
	_ = client.Close()
}

func TestErrorHelpersOnErrorsWithoutErrorInfo(t *testing.T) {
	for _, err := range []error{nil, errors.New("plain"), status.Error(codes.Internal, "no details")} {
		if taskmem.ErrorInfo(err) != nil || taskmem.ErrorReason(err) != taskmemv1.ErrorReason_ERROR_REASON_UNSPECIFIED || taskmem.ErrorField(err) != "" {
			t.Errorf("helpers on %v: %v %v %q", err, taskmem.ErrorInfo(err), taskmem.ErrorReason(err), taskmem.ErrorField(err))
		}
	}
}
