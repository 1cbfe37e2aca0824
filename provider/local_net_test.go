package provider_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

// TestLocalAllowlist: a local sandbox with network = "HOST:PORT" reaches
// that listener and not another port of the same host; the second
// listener's accept count is the evidence.
func TestLocalAllowlist(t *testing.T) {
	var addr string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsPrivate() {
			addr = n.IP.String()
		}
	}
	if addr == "" {
		t.Skip("no public-range IPv4 address on this host (private ranges are blocked by design)")
	}
	listen := func() (net.Listener, chan struct{}) {
		ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		got := make(chan struct{}, 8)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
				got <- struct{}{}
			}
		}()
		return ln, got
	}
	allowed, allowedGot := listen()
	other, otherGot := listen()
	text := fmt.Sprintf("[sandbox.b]\nprovider = \"local\"\nnetwork = %q\ntimeout = \"20s\"\n", allowed.Addr().String())
	c, err := provider.ParseCatalog("t.toml", []byte(text), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, _ := c.Operator(provider.Identity{}).Sandbox("b")
	probe := func(target net.Addr) string {
		host, port, _ := net.SplitHostPort(target.String())
		res, err := h.Execute(context.Background(), provider.Request{Code: fmt.Sprintf(`
import socket
s = socket.socket(); s.settimeout(3)
try:
    s.connect((%q, %s)); print("connected")
except OSError as e:
    print("refused")
`, host, port)})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(res.Stdout)
	}
	if got := probe(allowed.Addr()); got != "connected" {
		t.Fatalf("control: the allowed listener was not reached: %q", got)
	}
	<-allowedGot
	if got := probe(other.Addr()); got != "refused" {
		t.Errorf("a port outside the allowlist: %q", got)
	}
	select {
	case <-otherGot:
		t.Errorf("a connection to the other port arrived")
	default:
	}
}
