package sandbox_test

import (
	"bufio"
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/sandbox"
)

// TestSignal: Process.Signal has the effect the signal would have on an
// ordinary process (the sandbox's init forwards it to the command): the
// default action of SIGTERM ends a command without a handler, and the
// Result names SIGTERM; a handler receives the signal; an ignored signal
// and one ignored by default change nothing.
func TestSignal(t *testing.T) {
	ex, _ := newExecutor(t, nil)
	// start runs script and returns once it printed "ready".
	start := func(t *testing.T, args ...string) (*sandbox.Process, *bufio.Reader) {
		t.Helper()
		r, w := io.Pipe()
		p, err := ex.Prepare(context.Background(), sandbox.Cmd{Args: args, Stdout: w, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.Close() })
		br := bufio.NewReader(r)
		line, err := br.ReadString('\n')
		if err != nil || line != "ready\n" {
			t.Fatalf("want ready, got %q (%v)", line, err)
		}
		go io.Copy(io.Discard, br)
		return p, br
	}
	wait := func(t *testing.T, p *sandbox.Process) *sandbox.Result {
		t.Helper()
		done := make(chan *sandbox.Result, 1)
		go func() {
			res, err := p.Wait()
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		select {
		case res := <-done:
			return res
		case <-time.After(20 * time.Second):
			p.Kill()
			t.Fatal("the command did not end after the signal")
			return nil
		}
	}

	t.Run("SIGTERM without a handler ends the command", func(t *testing.T) {
		p, _ := start(t, "sh", "-c", "echo ready; exec sleep 30")
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		res := wait(t, p)
		if res.Status != sandbox.StatusFailed || res.Signal != syscall.SIGTERM.String() || res.ExitCode != -1 {
			t.Fatalf("status %s signal %q exit %d; want failed, %q, -1", res.Status, res.Signal, res.ExitCode, syscall.SIGTERM.String())
		}
	})
	t.Run("a handler receives SIGTERM", func(t *testing.T) {
		// Short sleeps, not one long one: Python runs a handler between
		// bytecodes, so a signal that lands after print() returns but
		// before the sleep's syscall starts waits for that sleep to end
		// (about 1 run in 50 under load with one 30 s sleep).
		p, _ := start(t, "/usr/bin/python3", "-c", `
import signal, sys, time
def bye(n, f):
    sys.exit(0)
signal.signal(signal.SIGTERM, bye)
print("ready", flush=True)
for _ in range(300):
    time.sleep(0.1)
sys.exit(9)`)
		if err := p.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if res := wait(t, p); res.Status != sandbox.StatusSucceeded {
			t.Fatalf("status %s signal %q exit %d; want the handler's exit 0", res.Status, res.Signal, res.ExitCode)
		}
	})
	t.Run("ignored signals change nothing", func(t *testing.T) {
		p, _ := start(t, "sh", "-c", "trap '' USR1; echo ready; sleep 1; exit 7")
		for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGWINCH, syscall.SIGCHLD} {
			if err := p.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
		if res := wait(t, p); res.ExitCode != 7 || res.Signal != "" {
			t.Fatalf("exit %d signal %q; want the command's own exit 7", res.ExitCode, res.Signal)
		}
	})
	t.Run("SIGINT to a shell script", func(t *testing.T) {
		p, _ := start(t, "sh", "-c", "echo ready; while :; do sleep 0.1; done")
		if err := p.Signal(syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		// The shell handles SIGINT itself and exits 130, as it would
		// outside the sandbox.
		if res := wait(t, p); res.Status != sandbox.StatusFailed || (res.Signal != syscall.SIGINT.String() && res.ExitCode != 130) {
			t.Fatalf("status %s signal %q exit %d", res.Status, res.Signal, res.ExitCode)
		}
	})
}
