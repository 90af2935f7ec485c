package taskmem

import (
	"crypto/tls"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
)

// Option configures Dial.
type Option func(*options)

type options struct {
	token            string
	namespace        string
	tls              *tls.Config
	useTLS           bool
	insecureOK       bool
	lazy             bool
	retry            *RetryPolicy // nil: DefaultRetryPolicy
	extraDialOptions []grpc.DialOption
}

// WithToken sends "authorization: Bearer <token>" on every call.
func WithToken(token string) Option {
	return func(o *options) { o.token = token }
}

// WithNamespace makes every call act in namespace (metadata
// "x-taskmem-namespace"). Without it the server uses the token's first
// namespace, or "default" on a server with no API keys.
func WithNamespace(namespace string) Option {
	return func(o *options) { o.namespace = namespace }
}

// WithTLS connects over TLS. A nil config uses the system roots and the
// server name from addr.
func WithTLS(config *tls.Config) Option {
	return func(o *options) {
		o.useTLS = true
		if config != nil {
			o.tls = config.Clone()
		}
	}
}

// WithInsecureTransport allows sending the token over plaintext to an
// address that is not loopback, for networks where another layer (a service
// mesh, a VPN) encrypts the traffic.
func WithInsecureTransport() Option {
	return func(o *options) { o.insecureOK = true }
}

// WithLazyConnect makes Dial return at once without connecting; the first
// call connects. Use it when the server may start after the client.
func WithLazyConnect() Option {
	return func(o *options) { o.lazy = true }
}

// WithDialOptions appends gRPC dial options, applied after the ones Dial sets
// (so they can override them: keepalive, message sizes, interceptors, ...).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(o *options) { o.extraDialOptions = append(o.extraDialOptions, opts...) }
}

// Keepalive: ping an idle connection with open streams every 30 s so a dead
// peer is noticed while a subscription waits for events. The server refuses
// pings more often than every 10 s (too_many_pings), so Time must stay >= 10 s.
const (
	keepaliveTime    = 30 * time.Second
	keepaliveTimeout = 10 * time.Second
	// A task with a large plan and its JSON inputs can exceed gRPC's default
	// 4 MiB receive limit; the server caps each request at 4 MiB, not responses.
	maxRecvMessageBytes = 64 << 20
	userAgent           = "taskmem-go/0.1"
)

func (o *options) grpcDialOptions(addr string) ([]grpc.DialOption, error) {
	var transport credentials.TransportCredentials
	if o.useTLS {
		config := o.tls
		if config == nil {
			config = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		transport = credentials.NewTLS(config)
	} else {
		transport = insecure.NewCredentials()
	}
	local := isLocalTarget(addr)
	if o.token != "" && !o.useTLS && !local && !o.insecureOK {
		return nil, fmt.Errorf("taskmem: refusing to send a token in plaintext to %s: use WithTLS, a loopback address, or WithInsecureTransport", addr)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithUserAgent(userAgent),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time:                keepaliveTime,
			Timeout:             keepaliveTimeout,
			PermitWithoutStream: false,
		}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMessageBytes)),
	}
	retry := DefaultRetryPolicy
	if o.retry != nil {
		retry = *o.retry
	}
	if retry.Attempts > 1 {
		opts = append(opts, grpc.WithChainUnaryInterceptor(retryInterceptor(retry)))
	}
	if !retry.UnlimitedCallsInFlight {
		// Inside the retries: each attempt waits for its slot.
		opts = append(opts, grpc.WithChainUnaryInterceptor(callLimitInterceptor(newCallLimit())))
	}
	if o.token != "" || o.namespace != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(&callCredentials{
			token:      o.token,
			namespace:  o.namespace,
			requireTLS: o.useTLS,
		}))
	}
	return append(opts, o.extraDialOptions...), nil
}
