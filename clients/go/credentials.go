package taskmem

import (
	"context"
	"net"
	"strings"
)

// Metadata keys the server reads.
const (
	authorizationHeader = "authorization"
	namespaceHeader     = "x-taskmem-namespace"
)

// callCredentials attaches the bearer token and the namespace to every call.
type callCredentials struct {
	token      string
	namespace  string
	requireTLS bool
}

func (c *callCredentials) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	md := make(map[string]string, 2)
	if c.token != "" {
		md[authorizationHeader] = "Bearer " + c.token
	}
	if c.namespace != "" {
		md[namespaceHeader] = c.namespace
	}
	return md, nil
}

// RequireTransportSecurity is false for plaintext connections that Dial
// allowed (loopback, or WithInsecureTransport); over TLS gRPC then also
// checks that the connection really is secure.
func (c *callCredentials) RequireTransportSecurity() bool { return c.requireTLS }

// isLocalTarget reports whether a gRPC target names this machine: a Unix
// socket, "localhost" or a loopback IP, with or without a resolver scheme.
func isLocalTarget(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	if i := strings.Index(target, "://"); i >= 0 {
		target = target[i+3:]
		// "dns://authority/host:port": drop the authority.
		if j := strings.LastIndex(target, "/"); j >= 0 {
			target = target[j+1:]
		}
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		host = strings.Trim(target, "[]")
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
