package taskmem

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// unavailableInvoker fails every call with UNAVAILABLE and records the requests it saw.
type unavailableInvoker struct{ requests []proto.Message }

func (u *unavailableInvoker) invoke(_ context.Context, _ string, req, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
	u.requests = append(u.requests, proto.Clone(req.(proto.Message)))
	return status.Error(codes.Unavailable, "server down")
}

func callThroughRetry(t *testing.T, method string, req proto.Message) *unavailableInvoker {
	t.Helper()
	invoker := &unavailableInvoker{}
	retry := retryInterceptor(RetryPolicy{Attempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	err := retry(context.Background(), method, req, nil, nil, invoker.invoke)
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("%s: got %v, want UNAVAILABLE", method, err)
	}
	return invoker
}

func TestReadsDeclaredNoSideEffectsAreRetriedOnUnavailable(t *testing.T) {
	for _, method := range []string{"/taskmem.v1.TaskService/GetTask", "/taskmem.v1.StateService/QueryTask",
		"/taskmem.v1.MemoryService/SearchMemories", "/taskmem.v1.StateService/PutWorkingMemory"} {
		if got := len(callThroughRetry(t, method, &taskmemv1.GetTaskRequest{}).requests); got != 3 {
			t.Errorf("%s: %d attempts, want 3", method, got)
		}
	}
}

func TestAWriteWithoutRequestIDIsNotRetried(t *testing.T) {
	invoker := callThroughRetry(t, "/taskmem.v1.StateService/ExtractState", &taskmemv1.ExtractStateRequest{TaskId: "tsk_x"})
	if len(invoker.requests) != 1 {
		t.Fatalf("ExtractState was attempted %d times, want 1", len(invoker.requests))
	}
}

func TestAWriteWithARequestIDIsRetriedWithTheSameFilledID(t *testing.T) {
	req := &taskmemv1.CreateTaskRequest{Name: "deploy"}
	invoker := callThroughRetry(t, "/taskmem.v1.TaskService/CreateTask", req)
	if len(invoker.requests) != 3 {
		t.Fatalf("CreateTask was attempted %d times, want 3", len(invoker.requests))
	}
	first := invoker.requests[0].(*taskmemv1.CreateTaskRequest).GetRequestId()
	if first == "" {
		t.Fatal("the empty request_id was not filled")
	}
	for _, sent := range invoker.requests {
		if sent.(*taskmemv1.CreateTaskRequest).GetRequestId() != first {
			t.Fatal("attempts carried different request_ids")
		}
	}
	if req.GetRequestId() != "" {
		t.Fatal("the caller's request was changed")
	}
}

func TestStreamsResumeOnTheDocumentedCodesOnly(t *testing.T) {
	documented := documentedResumeCodes(t)
	if len(documented) == 0 {
		t.Fatal("SubscribeEvents' comment lists no resume codes")
	}
	for code := codes.OK + 1; code <= codes.Unauthenticated; code++ {
		if got := retryable(status.Error(code, "x")); got != documented[code] {
			t.Errorf("%v: resumes %v; SubscribeEvents' comment says %v", code, got, documented[code])
		}
	}
}

// documentedResumeCodes reads the codes listed under "Resuming:" in
// SubscribeEvents' comment in task_service.proto, the one list the three
// clients follow.
func documentedResumeCodes(t *testing.T) map[codes.Code]bool {
	t.Helper()
	proto, err := os.ReadFile(filepath.Join("..", "..", "proto", "taskmem", "v1", "task_service.proto"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(proto)
	start := strings.Index(text, "// Resuming:")
	if start < 0 {
		t.Fatal(`no "Resuming:" paragraph in task_service.proto`)
	}
	listed := map[codes.Code]bool{}
	for _, line := range strings.Split(text[start:], "\n")[1:] {
		match := resumeLine.FindStringSubmatch(line)
		if match == nil {
			if len(listed) > 0 {
				break
			}
			continue
		}
		var code codes.Code
		if err := code.UnmarshalJSON([]byte(`"` + match[1] + `"`)); err != nil {
			t.Fatalf("%q: %v", match[1], err)
		}
		listed[code] = true
	}
	return listed
}

var resumeLine = regexp.MustCompile(`^\s*//\s{3}([A-Z_]+)\s{2,}\S`)
