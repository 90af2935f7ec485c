package taskmem_test

import (
	"strings"
	"testing"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

func TestWaitServiceCreatesAndResolvesAnExternalWait(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	task := createTask(ctx, t, client, "await approval")

	created, err := client.Waits.CreateWait(ctx, &taskmemv1.CreateWaitRequest{
		TaskId:   task.GetId(),
		Criteria: "release approved",
		Target:   &taskmemv1.WaitTarget{Kind: &taskmemv1.WaitTarget_External{External: &taskmemv1.ExternalTarget{Resolver: "release manager"}}},
	})
	if err != nil {
		t.Fatalf("CreateWait: %v", err)
	}
	resolved, err := client.Waits.ResolveWait(ctx, &taskmemv1.ResolveWaitRequest{WaitId: created.GetWait().GetId(), Result: "approved"})
	if err != nil {
		t.Fatalf("ResolveWait: %v", err)
	}
	if resolved.GetWait().GetStatus() != taskmemv1.WaitStatus_WAIT_STATUS_RESOLVED {
		t.Errorf("wait status %v, want RESOLVED", resolved.GetWait().GetStatus())
	}
}

func TestStateServiceRendersTheTaskStateWithItsPlanAsYAML(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)
	task := createTask(ctx, t, client, "state of the deploy")

	state, err := client.State.GetTaskState(ctx, &taskmemv1.GetTaskStateRequest{TaskId: task.GetId()})
	if err != nil {
		t.Fatalf("GetTaskState: %v", err)
	}
	if !strings.Contains(state.GetYaml(), "id: "+task.GetId()) || !strings.Contains(state.GetYaml(), "- id: deploy") {
		t.Errorf("task-state YAML lacks the task id or its plan:\n%s", state.GetYaml())
	}
}

func TestMemoryServiceStoresAndReturnsKnowledge(t *testing.T) {
	srv := startServer(t)
	client := srv.dial(t)
	ctx := testContext(t)

	upserted, err := client.Memory.UpsertKnowledge(ctx, &taskmemv1.UpsertKnowledgeRequest{
		Category: taskmemv1.KnowledgeCategory_KNOWLEDGE_CATEGORY_FACT, Key: "go-client.deploy-target", Value: "staging",
	})
	if err != nil {
		t.Fatalf("UpsertKnowledge: %v", err)
	}
	got, err := client.Memory.GetKnowledge(ctx, &taskmemv1.GetKnowledgeRequest{Id: upserted.GetKnowledge().GetId()})
	if err != nil {
		t.Fatalf("GetKnowledge: %v", err)
	}
	if got.GetKnowledge().GetValue() != "staging" {
		t.Errorf("knowledge value %q, want %q", got.GetKnowledge().GetValue(), "staging")
	}
}
