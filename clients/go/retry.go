package taskmem

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// RetryPolicy says how often a unary call that is safe to repeat is retried
// on UNAVAILABLE (the server restarting, a broken connection, an overloaded
// server refusing). A call is safe to repeat when its RPC is declared
// idempotency_level = NO_SIDE_EFFECTS (a read) or IDEMPOTENT in the contract,
// or its request has a request_id: the client fills an empty one, so every
// attempt carries the same id and the server returns the first result
// instead of writing twice. Any call an overloaded server refused before
// starting it (ERROR_REASON_OVERLOADED) is safe to repeat. When the server
// asks for a pause (the grpc-retry-pushback-ms trailer, or a
// google.rpc.RetryInfo detail), the next attempt waits at least that long.
// The call's context deadline covers all attempts.
type RetryPolicy struct {
	// Attempts in all, the first included; 1 turns retries off.
	Attempts int
	// The pause before the second attempt, doubled up to MaxBackoff, jittered.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// UnlimitedCallsInFlight sends every call at once. By default, after the
	// server refuses a call as overloaded, the client keeps fewer calls at the
	// server at once and holds the rest until calls finish (see callLimit).
	UnlimitedCallsInFlight bool
}

// DefaultRetryPolicy is what Dial uses unless WithRetryPolicy says otherwise.
var DefaultRetryPolicy = RetryPolicy{Attempts: 8, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 2 * time.Second}

// WithRetryPolicy replaces DefaultRetryPolicy; RetryPolicy{Attempts: 1} turns retries off.
func WithRetryPolicy(policy RetryPolicy) Option {
	return func(o *options) { o.retry = &policy }
}

func retryInterceptor(policy RetryPolicy) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
		invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		msg, ok := req.(proto.Message)
		if !ok {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		filled, hasRequestID := withRequestID(msg)
		safe := hasRequestID || safeToRepeat(method)
		delay := policy.InitialBackoff
		for attempt := 1; ; attempt++ {
			var trailer metadata.MD
			err := invoker(ctx, method, filled, reply, cc, append(opts, grpc.Trailer(&trailer))...)
			if err == nil || status.Code(err) != codes.Unavailable || attempt >= policy.Attempts {
				return err
			}
			if !safe && ErrorReason(err) != taskmemv1.ErrorReason_ERROR_REASON_OVERLOADED {
				return err
			}
			pause := jitter(delay)
			if asked, ok := retryDelay(err, trailer); ok && asked > pause {
				pause = asked
			}
			timer := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				timer.Stop()
				return err
			case <-timer.C:
			}
			delay = min(2*delay, policy.MaxBackoff)
		}
	}
}

// retryDelay is the pause an overloaded server asked for before a retry: the
// grpc-retry-pushback-ms trailer, else a google.rpc.RetryInfo detail.
func retryDelay(err error, trailer metadata.MD) (time.Duration, bool) {
	if values := trailer.Get("grpc-retry-pushback-ms"); len(values) > 0 {
		if ms, parseErr := strconv.Atoi(values[0]); parseErr == nil && ms >= 0 {
			return time.Duration(ms) * time.Millisecond, true
		}
	}
	for _, detail := range status.Convert(err).Details() {
		if info, ok := detail.(*errdetails.RetryInfo); ok && info.GetRetryDelay() != nil {
			return info.GetRetryDelay().AsDuration(), true
		}
	}
	return 0, false
}

// withRequestID returns msg, or a copy with a fresh request_id when msg has
// the field and it is empty (the caller's message is left as it was), and
// whether msg has the field.
func withRequestID(msg proto.Message) (proto.Message, bool) {
	field := msg.ProtoReflect().Descriptor().Fields().ByName("request_id")
	if field == nil || field.Kind() != protoreflect.StringKind {
		return msg, false
	}
	if msg.ProtoReflect().Get(field).String() != "" {
		return msg, true
	}
	var id [16]byte
	_, _ = rand.Read(id[:]) // crypto/rand.Read never fails on supported platforms
	filled := proto.Clone(msg)
	filled.ProtoReflect().Set(field, protoreflect.ValueOfString(hex.EncodeToString(id[:])))
	return filled, true
}

var idempotencyLevels sync.Map // full method name -> descriptorpb.MethodOptions_IdempotencyLevel

// safeToRepeat reports whether the contract declares the RPC ("/taskmem.v1.TaskService/GetTask")
// NO_SIDE_EFFECTS or IDEMPOTENT, read from the generated descriptors.
func safeToRepeat(method string) bool {
	level, ok := idempotencyLevels.Load(method)
	if !ok {
		level = idempotencyLevel(method)
		idempotencyLevels.Store(method, level)
	}
	switch level.(descriptorpb.MethodOptions_IdempotencyLevel) {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS, descriptorpb.MethodOptions_IDEMPOTENT:
		return true
	}
	return false
}

func idempotencyLevel(method string) descriptorpb.MethodOptions_IdempotencyLevel {
	name := protoreflect.FullName(strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", "."))
	found, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN
	}
	md, ok := found.(protoreflect.MethodDescriptor)
	if !ok {
		return descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN
	}
	opts, _ := md.Options().(*descriptorpb.MethodOptions)
	return opts.GetIdempotencyLevel()
}
