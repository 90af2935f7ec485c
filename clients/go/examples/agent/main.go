// Command agent shows an agent recording its work in taskmem: it registers a
// task with a plan, works through the plan recording each action, and
// watches the task's events as they happen.
//
//	make run                                  # in another terminal
//	go run ./examples/agent -addr 127.0.0.1:50051
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "taskmem server address")
	token := flag.String("token", os.Getenv("TASKMEM_API_KEY"), "API key, if the server has keys")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *addr, *token); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, addr, token string) error {
	var opts []taskmem.Option
	if token != "" {
		opts = append(opts, taskmem.WithToken(token))
	}
	dialCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	client, err := taskmem.Dial(dialCtx, addr, opts...)
	if err != nil {
		return err
	}
	defer client.Close()

	created, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{
		Name: "Deploy coursefolio",
		Goal: "Build the image, push it and deploy it to staging.",
		Plan: []*taskmemv1.PlanItemSpec{
			{Id: "build", Stage: "1", Title: "Build the image", ToolName: "docker"},
			{Id: "push", Stage: "1", Title: "Push the image", ToolName: "docker", DependsOn: []string{"build"}},
			{Id: "deploy", Stage: "2", Title: "Deploy to staging", ToolName: "ssh", DependsOn: []string{"push"}},
		},
	})
	if err != nil {
		if status.Code(err) == codes.InvalidArgument {
			return fmt.Errorf("CreateTask: %v (field %q): %w", taskmem.ErrorReason(err), taskmem.ErrorField(err), err)
		}
		return fmt.Errorf("CreateTask: %w", err)
	}
	task := created.GetTask()
	fmt.Printf("task %s registered with %d plan items\n", task.GetId(), len(created.GetPlan().GetItems()))

	// Watch the task's events while the agent works. Events resumes by
	// itself after a broken connection, so each event is printed once.
	watchCtx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev, err := range client.Events(watchCtx, &taskmemv1.SubscribeEventsRequest{TaskIds: []string{task.GetId()}}) {
			if err != nil {
				if status.Code(err) != codes.Canceled {
					log.Printf("events: %v", err)
				}
				return
			}
			fmt.Printf("  event %3d %s\n", ev.GetCursor(), ev.GetType())
		}
	}()

	for _, item := range created.GetPlan().GetItems() {
		if err := work(ctx, client, task.GetId(), item); err != nil {
			return err
		}
	}

	progress, err := client.Tasks.GetProgress(ctx, &taskmemv1.GetProgressRequest{TaskId: task.GetId()})
	if err != nil {
		return fmt.Errorf("GetProgress: %w", err)
	}
	fmt.Printf("where was I? %s\n", progress.GetSummary())

	time.Sleep(200 * time.Millisecond) // let the last events arrive
	stopWatching()
	<-watched
	return nil
}

// work carries out one plan item and records it: the item goes IN_PROGRESS,
// an action is recorded with its log, then both are completed.
func work(ctx context.Context, client *taskmem.Client, taskID string, item *taskmemv1.PlanItem) error {
	if _, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{
		TaskId: taskID, ItemId: item.GetId(), Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_IN_PROGRESS,
	}); err != nil {
		return fmt.Errorf("start %s: %w", item.GetId(), err)
	}
	input, _ := structpb.NewStruct(map[string]any{"step": item.GetId()})
	recorded, err := client.Tasks.RecordAction(ctx, &taskmemv1.RecordActionRequest{
		TaskId: taskID, PlanItemId: item.GetId(), Type: taskmemv1.ActionType_ACTION_TYPE_CLI,
		ToolName: item.GetToolName(), Summary: item.GetTitle(), Input: input,
	})
	if err != nil {
		return fmt.Errorf("record %s: %w", item.GetId(), err)
	}
	action := recorded.GetAction()
	if _, err := client.Tasks.AppendActionLog(ctx, &taskmemv1.AppendActionLogRequest{
		ActionId: action.GetId(),
		Lines:    []*taskmemv1.LogLineInput{{Content: "running " + item.GetTitle()}, {Content: "done"}},
	}); err != nil {
		return fmt.Errorf("log %s: %w", item.GetId(), err)
	}
	output, _ := structpb.NewStruct(map[string]any{"ok": true})
	if _, err := client.Tasks.CompleteAction(ctx, &taskmemv1.CompleteActionRequest{
		ActionId: action.GetId(), Status: taskmemv1.ActionStatus_ACTION_STATUS_SUCCEEDED,
		Output: output, Duration: durationpb.New(150 * time.Millisecond),
	}); err != nil {
		return fmt.Errorf("complete action of %s: %w", item.GetId(), err)
	}
	summary := item.GetTitle() + ": done"
	if _, err := client.Tasks.UpdatePlanItem(ctx, &taskmemv1.UpdatePlanItemRequest{
		TaskId: taskID, ItemId: item.GetId(), Status: taskmemv1.PlanItemStatus_PLAN_ITEM_STATUS_COMPLETED, Summary: &summary,
	}); err != nil {
		return fmt.Errorf("complete %s: %w", item.GetId(), err)
	}
	return nil
}
