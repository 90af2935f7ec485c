package taskmem

import "testing"

func TestLocalTargetsAreLoopbackAddressesAndUnixSockets(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:50051":             true,
		"127.8.9.1:50051":             true,
		"localhost:50051":             true,
		"[::1]:50051":                 true,
		"dns:///localhost:50051":      true,
		"passthrough:///127.0.0.1:80": true,
		"unix:///tmp/taskmem.sock":    true,
		"10.0.0.5:50051":              false,
		"taskmem.example.com:443":     false,
		"dns:///taskmem.example.com":  false,
		"localhost.example.com:443":   false,
	}
	for target, want := range cases {
		if got := isLocalTarget(target); got != want {
			t.Errorf("isLocalTarget(%q) = %v, want %v", target, got, want)
		}
	}
}
