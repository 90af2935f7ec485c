// Command benchsubscriber is the Go subscriber of bench/events_bench.py: it
// follows a task's MESSAGE_POSTED events with Client.Events.
//
//	benchsubscriber ADDRESS TASK_ID AFTER_CURSOR
//
// Each message's content is the writer's send time (ns since the epoch), or
// "ready"/"end". It prints "ready" when the ready message arrives; on "end" it
// prints one "SEND_NS APPEND_NS RECV_NS" line per timed event (APPEND_NS: the
// event's create_time) and exits.
package main

import (
	"bufio"
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"time"

	taskmem "github.com/taskmem/taskmem/clients/go"
	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

func main() {
	if len(os.Args) != 4 {
		log.Fatal("usage: benchsubscriber ADDRESS TASK_ID AFTER_CURSOR")
	}
	after, err := strconv.ParseInt(os.Args[3], 10, 64)
	if err != nil {
		log.Fatalf("AFTER_CURSOR: %v", err)
	}
	ctx := context.Background()
	client, err := taskmem.Dial(ctx, os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	type sample struct{ sent, appended, got int64 }
	received := make([]sample, 0, 1<<16)
	req := &taskmemv1.SubscribeEventsRequest{
		TaskIds:     []string{os.Args[2]},
		Types:       []taskmemv1.EventType{taskmemv1.EventType_EVENT_TYPE_MESSAGE_POSTED},
		AfterCursor: after,
	}
	for ev, err := range client.Events(ctx, req) {
		if err != nil {
			log.Fatal(err)
		}
		now := time.Now().UnixNano()
		content := ev.GetPayload().GetFields()["content"].GetStringValue()
		if content == "ready" {
			fmt.Println("ready")
			continue
		}
		if content == "end" {
			break
		}
		sent, err := strconv.ParseInt(content, 10, 64)
		if err != nil {
			log.Fatalf("message content %q: %v", content, err)
		}
		received = append(received, sample{sent, ev.GetCreateTime().AsTime().UnixNano(), now})
	}
	out := bufio.NewWriter(os.Stdout)
	for _, s := range received {
		fmt.Fprintf(out, "%d %d %d\n", s.sent, s.appended, s.got)
	}
	if err := out.Flush(); err != nil {
		log.Fatal(err)
	}
}
