package testnet

import (
	"runtime"
	"strings"
	"time"
)

// GatewayGoroutines lists the stacks of this process's goroutines that run
// code of the egress gateway (egress, egress/netstack, egress/remote) or
// of gVisor's netstack.
func GatewayGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "airlock/egress.") || strings.Contains(g, "airlock/egress/netstack.") || strings.Contains(g, "airlock/egress/remote.") || strings.Contains(g, "gvisor.dev/gvisor") {
			out = append(out, g)
		}
	}
	return out
}

// WaitGatewayGoroutines waits up to two seconds for the gateway goroutines
// to be no more than n, and returns the stacks of those left over ("" when
// none are).
func WaitGatewayGoroutines(n int) string {
	deadline := time.Now().Add(2 * time.Second)
	for {
		now := GatewayGoroutines()
		if len(now) <= n {
			return ""
		}
		if time.Now().After(deadline) {
			return strings.Join(now, "\n\n")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
