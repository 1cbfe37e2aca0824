package sandbox_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// A command that stops itself (SIGSTOP, which no process of the sandbox
// could undo: the init is in another session) does not hold its run
// until the wall-clock budget: the init continues it, with a terminal
// and with pipes. A child it leaves stopped when it ends does not
// outlive the run: host-side, nothing is left in the run's pid
// namespace (held open, so its number is not another run's). Before,
// such a run hung until its timeout.
func TestAttackStoppedCommandEnds(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	// It waits for the test to hold its pid namespace (the file "pinned"
	// in the workspace, its working directory), or it could be gone
	// before the test saw it.
	const script = `while [ ! -e pinned ]; do sleep 0.05; done; kill -STOP $$; echo resumed-$((6*7)); (sleep 100; :) & kill -STOP $!; echo child-stopped`
	for _, tty := range []bool{false, true} {
		name := "pipes"
		if tty {
			name = "terminal"
		}
		t.Run(name, func(t *testing.T) {
			marker := sandboxtest.Marker(t, "stop")
			out := newScreen()
			cmd := sandbox.Cmd{Args: sandboxtest.Sh(script, marker), Stdout: out, Stderr: out, Timeout: time.Minute}
			if tty {
				cmd.Terminal = &sandbox.Terminal{Rows: 24, Cols: 80}
			}
			proc, err := sb.Executor.Prepare(context.Background(), cmd)
			if err != nil {
				t.Fatal(err)
			}
			if err := proc.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proc.Kill() })
			pid := sandboxtest.WaitFor(marker, 30*time.Second)
			if pid == 0 {
				t.Fatal("the command never appeared on the host")
			}
			ns := sandboxtest.OpenPidNamespace(t, pid)
			pinned := filepath.Join(sb.Workspace, "pinned")
			must(t, os.WriteFile(pinned, nil, 0o644))
			defer os.Remove(pinned)
			res, err := proc.Wait()
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case res.Status != sandbox.StatusSucceeded || !strings.Contains(out.String(), "resumed-42"):
				t.Errorf("status %s: a command that stopped itself was not continued; it printed:\n%q", res.Status, out)
			case !strings.Contains(out.String(), "child-stopped"):
				// The positive control: the child was there, stopped.
				t.Errorf("the command never stopped its child:\n%q", out)
			}
			if n := ns.Procs(); n > 0 {
				t.Errorf("ATTACK SUCCEEDED: %d processes (the stopped child) left in the run's pid namespace", n)
			}
			if left := sandboxtest.Procs(marker); len(left) > 0 {
				t.Errorf("ATTACK SUCCEEDED: processes %v of the run survived it", left)
			}
		})
	}
}

// A run held by Terminal.Suspend and ended meanwhile (Kill, as the
// timeout or the output budget do) ends: the init and the command are
// stopped, and SIGKILL ends stopped processes; nothing is left in its
// pid namespace.
func TestAttackPTYSuspendedRunEnds(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	marker := sandboxtest.Marker(t, "held")
	src := "import sys, time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"
	proc, scr, keys, suspended, resume := startPTYSuspend(t, sb, sandboxtest.Python, "-c", src, marker)
	defer close(resume) // the Suspend still waiting, once the test is done
	scr.waitFor(t, 0, "tick 1")
	pid := sandboxtest.WaitFor(marker, 30*time.Second)
	if pid == 0 {
		t.Fatal("the command never appeared on the host")
	}
	ns := sandboxtest.OpenPidNamespace(t, pid)
	keys.Write([]byte("\x1a"))
	select {
	case <-suspended:
	case <-time.After(30 * time.Second):
		t.Fatalf("^Z did not call Terminal.Suspend:\n%q", scr.String())
	}
	// SIGSTOP takes effect as the command next runs: a moment later.
	st := procState(pid)
	for end := time.Now().Add(10 * time.Second); st != "T" && time.Now().Before(end); st = procState(pid) {
		time.Sleep(10 * time.Millisecond)
	}
	if st != "T" {
		t.Fatalf("the command is %q during Suspend, want stopped (T)", st)
	}
	proc.Kill()
	done := make(chan struct{})
	go func() {
		defer close(done)
		proc.Wait()
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Wait did not return after Kill of a run held stopped")
	}
	if n := ns.Procs(); n > 0 {
		t.Errorf("ATTACK SUCCEEDED: %d processes left in the pid namespace of a run killed while stopped", n)
	}
}

// procState is the state letter of pid in /proc (R, S, T, ...).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// What the caller types once a run with a terminal has ended is not
// taken by it: the next reader of the caller's input (the user's shell,
// after airlock) gets it. Before, the copier into the pty stayed blocked
// reading the caller's input after Wait and took the next line.
func TestAttackPTYInputAfterEnd(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	scr := newScreen()
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
		Args: sandboxtest.Sh("echo ran-$((2+3))"), Stdin: r, Stdout: scr,
		Terminal: &sandbox.Terminal{Rows: 24, Cols: 80}, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	res, err := proc.Wait()
	if err != nil || res.Status != sandbox.StatusSucceeded || !strings.Contains(scr.String(), "ran-5") {
		t.Fatalf("the run: %v, status %s, terminal %q", err, res.Status, scr)
	}
	const next = "typed after the run\n"
	if _, err := w.WriteString(next); err != nil {
		t.Fatal(err)
	}
	_ = r.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(next))
	if n, err := io.ReadFull(r, got); err != nil {
		t.Fatalf("the input typed after the run was taken by it: read %q, %v", got[:n], err)
	}
	if string(got) != next {
		t.Errorf("read %q after the run, want %q", got, next)
	}
}
