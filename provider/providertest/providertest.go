// Package providertest is the conformance suite every execution provider
// runs: each Status reached for real, each budget enforced with a
// positive control that shows the probe could fail, network none, identity
// isolation between scopes, LRU eviction, revocation, a working
// directory the run's user can write, files moved in and out only as
// regular files (never through a link a run left, never blocking on a
// FIFO), no detached work of a kept scope's call outliving it, and
// nothing of ours left behind afterwards.
//
// A provider's test calls Run with a Target saying how to configure it
// and how to find what it leaves behind. The probes are sh and python
// programs, so a container image must have busybox and python3.
package providertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/provider"
)

// Target is one provider under test.
type Target struct {
	Driver provider.Driver
	// Extra is TOML added to every [sandbox.NAME] table (image = …).
	Extra string
	// Leftovers lists what the provider left behind after Close
	// (containers, processes, directories); the suite fails on any.
	Leftovers func(t *testing.T) []string
}

// catalog makes a catalog with one sandbox "box" of the given settings,
// assigned to agent "a".
func (tg Target) catalog(t *testing.T, settings string) *provider.Catalog {
	t.Helper()
	text := fmt.Sprintf("[sandbox.box]\nprovider = %q\n%s\n%s\n\n[agent.a]\nsandboxes = [\"box\"]\n",
		tg.Driver.Name, tg.Extra, settings)
	c, err := provider.ParseCatalog(filepath.Join(t.TempDir(), "sandboxes.toml"), []byte(text), tg.Driver)
	if err != nil {
		t.Fatalf("catalog: %v\n%s", err, text)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

func handle(t *testing.T, c *provider.Catalog, id provider.Identity) *provider.Handle {
	t.Helper()
	id.Agent = "a"
	h, err := c.Begin(id).Sandbox("box")
	if err != nil {
		t.Fatalf("handle: %v", err)
	}
	return h
}

func exec(t *testing.T, h *provider.Handle, req provider.Request) provider.Result {
	t.Helper()
	res, err := h.Execute(context.Background(), req)
	if err != nil {
		t.Fatalf("execute: %v", err)
	}
	return res
}

func sh(code string) provider.Request { return provider.Request{Code: code, Lang: provider.LangSh} }

func want(t *testing.T, res provider.Result, st provider.Status) {
	t.Helper()
	if res.Status != st {
		t.Fatalf("status %s (exit %d, limit %q), want %s\nstdout: %.300s\nstderr: %.300s",
			res.Status, res.ExitCode, res.Limit, st, res.Stdout, res.Stderr)
	}
}

// Run runs the whole suite against tg.
func Run(t *testing.T, tg Target) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, Target)
	}{
		{"Statuses", statuses}, {"Queue", queue}, {"Budgets", budgets},
		{"NetworkNone", networkNone}, {"Isolation", isolation}, {"Revocation", revocation},
		{"WorkingDir", workingDir}, {"LinksAndFifos", linksAndFifos}, {"DetachedWork", detachedWork},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Registered first, so it runs after every catalog closed.
			t.Cleanup(func() {
				if tg.Leftovers == nil {
					return
				}
				if left := tg.Leftovers(t); len(left) > 0 {
					t.Errorf("left behind after Close: %v", left)
				}
			})
			c.run(t, tg)
		})
	}
}

func statuses(t *testing.T, tg Target) {
	c := tg.catalog(t, `timeout = "20s"`+"\nmax_output = \"1MiB\"")
	h := handle(t, c, provider.Identity{})

	res := exec(t, h, sh("echo hello; echo oops >&2"))
	want(t, res, provider.StatusSucceeded)
	if res.Stdout != "hello\n" || res.Stderr != "oops\n" || res.ExitCode != 0 {
		t.Errorf("got %+v", res)
	}
	res = exec(t, h, sh("echo partial; exit 3"))
	want(t, res, provider.StatusFailed)
	if res.ExitCode != 3 || res.Stdout != "partial\n" {
		t.Errorf("got exit %d stdout %q", res.ExitCode, res.Stdout)
	}
	res = exec(t, h, provider.Request{Code: "import sys; print(sys.stdin.read().upper())", Stdin: []byte("py")})
	want(t, res, provider.StatusSucceeded)
	if res.Stdout != "PY\n" {
		t.Errorf("python stdout %q", res.Stdout)
	}
	res = exec(t, h, provider.Request{Argv: []string{"sh", "-c", "echo $0-$1", "x", "y"}})
	if res.Stdout != "x-y\n" {
		t.Errorf("argv stdout %q (%s)", res.Stdout, res.Stderr)
	}
	res = exec(t, h, provider.Request{Code: "tr a-z A-Z < in.txt > out.txt; ln -s /etc/passwd link",
		Lang: provider.LangSh, Files: map[string][]byte{"in.txt": []byte("data")}, OutputFiles: []string{"out.txt", "absent.txt"}})
	want(t, res, provider.StatusSucceeded)
	if string(res.OutputFiles["out.txt"]) != "DATA" || len(res.OutputFiles) != 1 {
		t.Errorf("output files %q", res.OutputFiles)
	}

	res = exec(t, h, provider.Request{Code: "sleep 30", Lang: provider.LangSh, Timeout: time.Second})
	want(t, res, provider.StatusTimedOut)

	// 10 MiB through the 1 MiB cap.
	res = exec(t, h, sh("head -c 10485760 /dev/zero | tr '\\0' a"))
	want(t, res, provider.StatusOutputLimitExceeded)
	if len(res.Stdout)+len(res.Stderr) > 1<<20 {
		t.Errorf("kept %d bytes past the 1 MiB cap", len(res.Stdout)+len(res.Stderr))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan provider.Result)
	go func() {
		r, err := h.Execute(ctx, sh("sleep 30"))
		if err != nil {
			t.Errorf("cancelled execute: %v", err)
		}
		done <- r
	}()
	waitBusy(t, h, 1)
	cancel()
	want(t, <-done, provider.StatusCancelled)
}

// waitBusy waits until n executions of h hold a slot.
func waitBusy(t *testing.T, h *provider.Handle, n int) {
	t.Helper()
	for i := 0; h.Busy() < n; i++ {
		if i > 2000 {
			t.Fatalf("never %d busy", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func queue(t *testing.T, tg Target) {
	c := tg.catalog(t, `timeout = "60s"`+"\nmax_scopes = 1")
	h := handle(t, c, provider.Identity{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = h.Execute(ctx, sh("sleep 60"))
	}()
	waitBusy(t, h, 1)
	res := exec(t, h, provider.Request{Code: "echo must-not-run", Lang: provider.LangSh, Timeout: 300 * time.Millisecond})
	want(t, res, provider.StatusTimedOut)
	if res.Metadata["ended"] != "queued" || res.Stdout != "" || res.Timings.Queue <= 0 {
		t.Errorf("queued call: %+v", res)
	}
	cancel()
	<-done
}

func budgets(t *testing.T, tg Target) {
	// Forty forks under a pids cap of 16: the count the run itself sees
	// (PID 1, the sandbox's init or the container's keeper, aside) must
	// stay under the cap (or the provider ends the run and says the
	// pids budget did); the control with a cap of 200 reaches forty.
	fork := provider.Request{Code: `
import os, time
for i in range(40):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.close(1); os.close(2); time.sleep(5); os._exit(0)
print(len([d for d in os.listdir("/proc") if d.isdigit() and d != "1"]), flush=True)
`}
	count := func(pids string) (int, provider.Result) {
		c := tg.catalog(t, "pids = "+pids+"\ntimeout = \"30s\"")
		res := exec(t, handle(t, c, provider.Identity{}), fork)
		var n int
		fmt.Sscan(res.Stdout, &n)
		t.Logf("pids = %s: %s, %d processes seen; stderr %.200q", pids, res.Status, n, res.Stderr)
		return n, res
	}
	if n, _ := count("200"); n < 40 {
		t.Fatalf("control: only %d processes with pids = 200; the probe cannot show the cap", n)
	}
	// Either the forks failed and the run saw at most 16, or the
	// provider ended the run and said the pids budget did it.
	n, res := count("16")
	if stopped := res.Status == provider.StatusFailed && res.Limit == provider.BudgetPids; !stopped && (n > 16 || n == 0) {
		t.Errorf("with pids = 16: %s (limit %q), %d processes seen", res.Status, res.Limit, n)
	}

	// 200 MiB touched under memory = 64MiB is killed; 16 MiB is not.
	alloc := func(mib int) provider.Request {
		return provider.Request{Code: fmt.Sprintf("b = b'x' * (%d << 20); print(len(b) >> 20)", mib)}
	}
	c := tg.catalog(t, `memory = "64MiB"`+"\ntimeout = \"30s\"")
	h := handle(t, c, provider.Identity{})
	want(t, exec(t, h, alloc(16)), provider.StatusSucceeded)
	res = exec(t, h, alloc(200))
	want(t, res, provider.StatusFailed)
	if res.Limit != provider.BudgetMemory {
		t.Errorf("memory kill reported as limit %q (exit %d)", res.Limit, res.ExitCode)
	}

	// Scratch: /tmp holds 16 MiB, not 32.
	c = tg.catalog(t, `scratch = "16MiB"`+"\ntimeout = \"30s\"")
	h = handle(t, c, provider.Identity{})
	want(t, exec(t, h, sh("head -c 8388608 /dev/zero > /tmp/f && echo ok")), provider.StatusSucceeded)
	want(t, exec(t, h, sh("head -c 33554432 /dev/zero > /tmp/f")), provider.StatusFailed)
}

func networkNone(t *testing.T, tg Target) {
	addr := hostAddr(t)
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	// Control: the listener is reachable from the host.
	cc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("control dial: %v", err)
	}
	cc.Close()
	<-accepted

	c := tg.catalog(t, `network = "none"`+"\ntimeout = \"20s\"")
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	res := exec(t, handle(t, c, provider.Identity{}), provider.Request{Code: fmt.Sprintf(`
import socket
s = socket.socket(); s.settimeout(3)
try:
    s.connect((%q, %s)); print("connected")
except OSError as e:
    print("refused", e)
`, host, port)})
	if strings.Contains(res.Stdout, "connected") || !strings.Contains(res.Stdout, "refused") {
		t.Errorf("network none: %q %q", res.Stdout, res.Stderr)
	}
	select {
	case <-accepted:
		t.Errorf("a connection from the sandbox arrived")
	default:
	}
}

// hostAddr is a non-loopback IPv4 address of this host.
func hostAddr(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	t.Skip("no non-loopback IPv4 address on this host")
	return ""
}

func isolation(t *testing.T, tg Target) {
	c := tg.catalog(t, `scope = "session"`+"\nmax_scopes = 2\ntimeout = \"20s\"")
	write := sh("echo x > mark; echo ok")
	check := sh("test -e mark && echo present || echo absent")
	a := provider.Identity{User: "u", Session: "A"}
	exec(t, handle(t, c, a), write)
	if got := exec(t, handle(t, c, a), check).Stdout; got != "present\n" {
		t.Fatalf("control: session A does not see its own file: %q", got)
	}
	for _, other := range []provider.Identity{{User: "u", Session: "B"}, {User: "v", Session: "A"}} {
		if got := exec(t, handle(t, c, other), check).Stdout; got != "absent\n" {
			t.Errorf("%+v sees session A's file: %q", other, got)
		}
	}
	// Scopes now: A, u/B, v/A → A was evicted when the third came.
	if got := exec(t, handle(t, c, a), check).Stdout; got != "absent\n" {
		t.Errorf("after two newer scopes with max_scopes = 2, session A survived: %q", got)
	}

	c = tg.catalog(t, `scope = "invocation"`+"\ntimeout = \"20s\"")
	h := handle(t, c, a)
	exec(t, h, write)
	if got := exec(t, h, check).Stdout; got != "present\n" {
		t.Fatalf("control: the invocation does not see its own file: %q", got)
	}
	if got := exec(t, handle(t, c, a), check).Stdout; got != "absent\n" {
		t.Errorf("a second invocation of the same session sees the first's file: %q", got)
	}
}

func revocation(t *testing.T, tg Target) {
	c := tg.catalog(t, `timeout = "60s"`+"\nmax_scopes = 1")
	inv := c.Begin(provider.Identity{Agent: "a"})
	h, err := inv.Sandbox("box")
	if err != nil {
		t.Fatal(err)
	}
	running := make(chan provider.Result)
	go func() {
		r, _ := h.Execute(context.Background(), sh("sleep 60"))
		running <- r
	}()
	waitBusy(t, h, 1)
	queued := make(chan error)
	go func() {
		_, err := h.Execute(context.Background(), sh("echo late"))
		queued <- err
	}()
	inv.Revoke()
	want(t, <-running, provider.StatusCancelled)
	if err := <-queued; !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("queued call after revoke: %v", err)
	}
	if _, err := h.Execute(context.Background(), sh("echo x")); !errors.Is(err, provider.ErrUnavailable) {
		t.Errorf("call after revoke: %v", err)
	}
}
