// Package taskmem is the Go client of the taskmem service, a persistent task
// memory for LLM agents.
//
// It is a thin layer over the generated gRPC stubs in
// github.com/taskmem/taskmem/clients/go/gen/taskmem/v1: Dial opens one
// connection with the bearer token, namespace, TLS and keepalive settings a
// taskmem server expects, Client.Tasks, Client.Waits, Client.State and
// Client.Memory are the generated service clients, and
// Client.Events ranges over the event stream, resuming from the last cursor
// after a broken connection.
//
//	client, err := taskmem.Dial(ctx, "127.0.0.1:50051", taskmem.WithToken(key))
//	if err != nil { ... }
//	defer client.Close()
//	resp, err := client.Tasks.CreateTask(ctx, &taskmemv1.CreateTaskRequest{Name: "deploy"})
//	if status.Code(err) == codes.InvalidArgument {
//		log.Printf("bad field %q", taskmem.ErrorField(err))
//	}
//
// Every call takes a context.Context; its deadline is the call's deadline.
// Errors are gRPC status errors: status.Code(err) gives the code, and
// ErrorReason, ErrorField and ErrorInfo read the google.rpc.ErrorInfo detail
// the server attaches.
package taskmem

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// Client is a connection to one taskmem server with a typed client per
// service. It is safe for concurrent use; share one per process and server.
type Client struct {
	// Tasks is the TaskService: tasks, plans, actions, messages, context
	// snapshots, events and progress.
	Tasks taskmemv1.TaskServiceClient
	// Waits is the WaitService: timer, task-status, event, HTTP, file and
	// external waits, and WatchWait.
	Waits taskmemv1.WaitServiceClient
	// State is the StateService: task state, structured state items, working
	// memory, BuildContext and QueryTask.
	State taskmemv1.StateServiceClient
	// Memory is the MemoryService: memory entries and search, knowledge,
	// episodes, artifacts and patterns.
	Memory taskmemv1.MemoryServiceClient

	conn *grpc.ClientConn
}

// Dial connects to a taskmem server at addr ("host:port", or any gRPC target
// such as "dns:///host:port" or "unix:///path").
//
// Unless WithLazyConnect is given, Dial waits until the connection is ready:
// it returns an error with code UNAVAILABLE if the first connection attempt
// fails (wrong address, server down, TLS handshake failure), or the context's
// error if ctx ends first. The connection reconnects by itself afterwards.
//
// A bearer token (WithToken) is sent only over TLS (WithTLS), to a loopback
// address, or when WithInsecureTransport says plaintext is intended;
// otherwise Dial refuses, so a key is never sent in clear text by accident.
func Dial(ctx context.Context, addr string, opts ...Option) (*Client, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dialOpts, err := o.grpcDialOptions(addr)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient(addr, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("taskmem: %w", err)
	}
	if !o.lazy {
		if err := waitReady(ctx, conn, addr); err != nil {
			_ = conn.Close()
			return nil, err
		}
	}
	return newClient(conn), nil
}

// newClient attaches one typed client per service to conn. A new service is
// one field above and one line here.
func newClient(conn *grpc.ClientConn) *Client {
	return &Client{
		Tasks:  taskmemv1.NewTaskServiceClient(conn),
		Waits:  taskmemv1.NewWaitServiceClient(conn),
		State:  taskmemv1.NewStateServiceClient(conn),
		Memory: taskmemv1.NewMemoryServiceClient(conn),
		conn:   conn,
	}
}

// Conn returns the underlying connection, for example to call the standard
// gRPC health service or to build a stub this package does not wrap.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// Close closes the connection. Calls and streams still running end with
// code CANCELED.
func (c *Client) Close() error { return c.conn.Close() }

// connectionError returns why the connection failed. gRPC keeps the last
// connection error for calls that fail fast, so a health check made while
// the connection is down returns it without touching the network. If the
// connection came up meanwhile, the check reaches the server and the
// answer, whatever it is, shows the server is there.
func connectionError(ctx context.Context, conn *grpc.ClientConn) error {
	_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if status.Code(err) == codes.Unavailable {
		return err
	}
	return nil
}

// waitReady starts connecting and waits for READY, the first failure, or the
// end of ctx.
func waitReady(ctx context.Context, conn *grpc.ClientConn, addr string) error {
	conn.Connect()
	for {
		state := conn.GetState()
		switch state {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure:
			if err := connectionError(ctx, conn); err != nil {
				return status.Errorf(codes.Unavailable, "taskmem: cannot connect to %s: %s", addr, status.Convert(err).Message())
			}
			return nil
		case connectivity.Shutdown:
			return status.Errorf(codes.Canceled, "taskmem: connection to %s was closed", addr)
		}
		if !conn.WaitForStateChange(ctx, state) {
			err := ctx.Err()
			if err == nil {
				err = errors.New("context ended")
			}
			return status.FromContextError(fmt.Errorf("taskmem: connecting to %s (%s): %w", addr, state, err)).Err()
		}
	}
}
