package taskmem

import (
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	taskmemv1 "github.com/taskmem/taskmem/clients/go/gen/taskmem/v1"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of the server's errors.
const ErrorDomain = "taskmem.dev"

// ErrorInfo returns the google.rpc.ErrorInfo detail of a gRPC error (also
// when wrapped with fmt.Errorf's %w), preferring one of domain ErrorDomain.
// It returns nil when err carries none.
func ErrorInfo(err error) *errdetails.ErrorInfo {
	st, ok := status.FromError(err)
	if !ok || st == nil {
		return nil
	}
	var first *errdetails.ErrorInfo
	for _, detail := range st.Details() {
		info, ok := detail.(*errdetails.ErrorInfo)
		if !ok {
			continue
		}
		if info.GetDomain() == ErrorDomain {
			return info
		}
		if first == nil {
			first = info
		}
	}
	return first
}

// ErrorReason returns the ErrorReason the server gave for err, for example
// taskmemv1.ErrorReason_ERROR_REASON_INVALID_FIELD. It is
// ERROR_REASON_UNSPECIFIED when err carries no ErrorInfo or a reason this
// client does not know (see ErrorInfo(err).GetReason() for the raw name).
func ErrorReason(err error) taskmemv1.ErrorReason {
	return taskmemv1.ErrorReason(taskmemv1.ErrorReason_value[ErrorInfo(err).GetReason()])
}

// ErrorField returns the request field an INVALID_ARGUMENT error names
// (ErrorInfo metadata "field", for example "plan[2].depends_on"), or "".
func ErrorField(err error) string {
	return ErrorInfo(err).GetMetadata()["field"]
}
