package sandbox_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// screen is what a pty run printed so far; a test waits on it for a line.
type screen struct {
	mu  sync.Mutex
	buf strings.Builder
	ch  chan struct{}
}

func newScreen() *screen { return &screen{ch: make(chan struct{}, 1)} }

func (s *screen) Write(b []byte) (int, error) {
	s.mu.Lock()
	s.buf.Write(b)
	s.mu.Unlock()
	select {
	case s.ch <- struct{}{}:
	default:
	}
	return len(b), nil
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the output after from holds want, and returns
// where it ends.
func (s *screen) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		out := s.String()
		if i := strings.Index(out[min(from, len(out)):], want); i >= 0 {
			return from + i + len(want)
		}
		select {
		case <-s.ch:
		case <-deadline:
			t.Fatalf("no %q on the terminal after 30s; it shows:\n%q", want, out)
		}
	}
}

// startPTY starts args in sb with a terminal of its own, 30x100, its
// input written through the returned pipe.
func startPTY(t *testing.T, sb *sandboxtest.Sandbox, args ...string) (*sandbox.Process, *screen, *io.PipeWriter) {
	t.Helper()
	in, keys := io.Pipe()
	scr := newScreen()
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
		Args: args, Stdin: in, Stdout: scr, Stderr: scr,
		Terminal: &sandbox.Terminal{Rows: 30, Cols: 100}, Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatalf("start with a terminal: %v", err)
	}
	t.Cleanup(func() { keys.Close(); proc.Kill() })
	return proc, scr, keys
}

// A command with a terminal of its own sees one: tty names the
// sandbox's /dev/pts, stty reads the window size the caller gave and
// its changes, and the command is its terminal's session leader.
func TestAttackPTYTerminal(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	// The control: without a terminal, a run has none.
	if o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh("tty")}); !strings.Contains(o.Stdout, "not a tty") {
		t.Fatalf("control: a run without Terminal has a tty: %s", o)
	}
	proc, scr, keys := startPTY(t, sb, "/bin/sh", "-c", `tty; stty size; ps -o pid=,sid=,tpgid= -p $$; echo via-$((6*7)) > /dev/tty; setsid sh -c 'echo x > /dev/tty || echo no-ctty-$((6*7))'; read x; stty size`)
	at := scr.waitFor(t, 0, "/dev/pts/")
	at = scr.waitFor(t, at, "30 100")
	// "> /dev/tty" opens it with O_CREAT, which the create guard
	// carries out: it is the caller's terminal still, and a process
	// without one (setsid) gets none.
	at = scr.waitFor(t, at, "via-42")
	at = scr.waitFor(t, at, "no-ctty-42")
	if err := proc.Resize(40, 120); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Write([]byte("\n")); err != nil {
		t.Fatal(err)
	}
	scr.waitFor(t, at, "40 120")
	res, err := proc.Wait()
	if err != nil || res.Status != sandbox.StatusSucceeded {
		t.Fatalf("run: %v %+v\n%s", err, res, scr)
	}
	// pid, sid and the terminal's foreground group: the shell leads
	// its session and its terminal's foreground.
	for _, line := range strings.Split(scr.String(), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == f[1] && f[0] != f[2] {
			t.Errorf("the shell leads its session but not its terminal's foreground: %q", line)
		}
	}
}

// bash -i has job control on the pty: a background job, jobs, ^Z of a
// foreground job, fg and ^C, as at a terminal.
func TestAttackPTYJobControl(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	_, scr, keys := startPTY(t, sb, "/bin/bash", "--norc", "--noprofile", "-i")
	type step struct{ keys, want string }
	at := 0
	for _, s := range []step{
		{"PS1='$ '\n", "$ "},
		{"sleep 100 &\n", "[1] "},
		{"jobs\n", "Running"},
		{"sleep 200\n", "sleep 200\r\n"},
		{"", ""},
		{"\x1a", "Stopped"},
		{"jobs\n", "[2]+  Stopped"},
		{"fg %2\n", "fg %2\r\n"},
		{"", ""},
		{"\x03", "$ "},
		{"", ""},
		{"jobs; echo done-$((6*7))\n", "done-42"},
	} {
		if s.keys == "" {
			// Let the foreground job start: a ^Z that comes while bash
			// reads the line flushes the line away (ISIG without NOFLSH).
			time.Sleep(time.Second)
			continue
		}
		if _, err := keys.Write([]byte(s.keys)); err != nil {
			t.Fatal(err)
		}
		if s.want != "" {
			at = scr.waitFor(t, at, s.want)
		}
	}
	if out := scr.String(); strings.Contains(out, "no job control") || strings.Contains(out, "cannot set terminal process group") {
		t.Errorf("bash found no job control:\n%s", out)
	}
	// The last jobs lists the background job only: ^C ended the other.
	last := scr.String()[strings.LastIndex(scr.String(), "done-$((6*7))"):]
	if !strings.Contains(last, "[1]+  Running") || strings.Contains(last, "[2]") {
		t.Errorf("after ^C of job 2, jobs does not list job 1 alone:\n%q", last)
	}
}

// Python's output to a terminal is line-buffered: a line appears while
// the program still runs, which through a pipe it does not.
func TestAttackPTYLineBuffered(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	src := `import time; print("serving", flush=False); time.sleep(600)`
	proc, scr, _ := startPTY(t, sb, sandboxtest.Python, "-c", src)
	scr.waitFor(t, 0, "serving")
	proc.Kill()
	// The control: through a pipe the line is held until the end.
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Py(src), Timeout: 3 * time.Second})
	if o := r.Wait(); o.Result.Status != sandbox.StatusTimedOut || o.Stdout != "" {
		t.Errorf("control: through a pipe, python's line came before it ended or it did not time out: %s", o)
	}
}

// Output written to the terminal counts against the output budget like
// any other: a command writing to its pty (and to /dev/tty) is ended.
func TestAttackPTYOutputBudget(t *testing.T) {
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Output = 64 << 10 })
	for _, args := range [][]string{
		sandboxtest.Sh("yes pty-output"),
		sandboxtest.Py(`import os; fd = os.open("/dev/tty", os.O_WRONLY)` + "\nwhile True: os.write(fd, b'tty-output' * 100)"),
	} {
		proc, scr, _ := startPTY(t, sb, args...)
		res, err := proc.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != sandbox.StatusOutputLimitExceeded || len(scr.String()) > 64<<10 {
			t.Errorf("%s: status %s with %d bytes on the terminal; want output_limit_exceeded with at most 64 KiB: %.200q", args, res.Status, len(scr.String()), scr)
		}
	}
}

// The command's terminal is not the caller's: with the caller's own
// terminal as Stdin, TIOCSTI on the command's terminal is refused and
// nothing reaches the caller's input queue; opening /dev/tty gives the
// command's own pty.
func TestAttackPTYNoInjection(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	_, caller := sandboxtest.OpenPTY(t)
	const inject = `import fcntl, termios, os
for fd in (0, os.open("/dev/tty", os.O_RDWR)):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"X")
        print("injected", fd)
    except OSError as e:
        print("refused", e.errno)
print("ttyname", os.ttyname(0), os.ttyname(os.open("/dev/tty", os.O_RDWR)))
`
	// The control: on the host, TIOCSTI on the caller's terminal types
	// into it (root may; an unprivileged caller only on its own
	// controlling terminal, which this is not: then skip).
	scr := newScreen()
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
		Args: sandboxtest.Py(inject), Stdin: caller, Stdout: scr,
		Terminal: &sandbox.Terminal{Rows: 24, Cols: 80}, Timeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	res, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	out := scr.String()
	if strings.Contains(out, "injected") || !strings.Contains(out, "refused 1") {
		t.Errorf("TIOCSTI on the command's terminal was not refused (EPERM): %s %q", res.Status, out)
	}
	// /dev/tty opened for writing comes from the create guard, which
	// hands over the run's pty itself (controllingTTY): its name is then
	// the pty's.
	if !strings.Contains(out, "ttyname /dev/pts/0 /dev/tty") && !strings.Contains(out, "ttyname /dev/pts/0 /dev/pts/0") {
		t.Errorf("the command's terminal is not its own pty: %q", out)
	}
	if got := sandboxtest.PendingInput(t, caller); got != "" {
		t.Errorf("ATTACK SUCCEEDED: %q reached the caller's terminal input", got)
	}
}

// vim works on the pty as at a terminal: it draws its screen, takes keys in insert and command mode, and writes
// the file, which is on the host after the run.
func TestAttackPTYVim(t *testing.T) {
	vim, err := exec.LookPath("vim")
	if err != nil {
		t.Skip("vim not installed")
	}
	sb, _ := attackTarget(t, nil)
	proc, scr, keys := startPTY(t, sb, vim, "-u", "NONE", "-N", "notes.txt")
	scr.waitFor(t, 0, `"notes.txt" [New]`) // vim drew its screen
	time.Sleep(500 * time.Millisecond)
	for _, k := range []string{"ihello from vim", "\x1b", ":wq\r"} {
		if _, err := keys.Write([]byte(k)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res, err := proc.Wait()
	if err != nil || res.Status != sandbox.StatusSucceeded {
		t.Fatalf("vim: %v %+v", err, res)
	}
	if b, err := os.ReadFile(filepath.Join(sb.Workspace, "notes.txt")); err != nil || string(b) != "hello from vim\n" {
		t.Errorf("notes.txt on the host: %q %v; vim's screen:\n%q", b, err, scr)
	}
	if strings.Contains(scr.String(), "Output is not to a terminal") || strings.Contains(scr.String(), "Input is not from a terminal") {
		t.Errorf("vim found no terminal:\n%q", scr)
	}
}

// ^Z on a command that is not a shell leaves nothing stopped for good:
// there is no shell in the sandbox to resume it, so it goes on, and ^C
// still ends it.
func TestAttackPTYSuspendNoShell(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	src := "import sys, time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"
	proc, scr, keys := startPTY(t, sb, sandboxtest.Python, "-c", src)
	at := scr.waitFor(t, 0, "tick 1")
	keys.Write([]byte("\x1a"))
	at = scr.waitFor(t, at, "tick 5") // it goes on after ^Z
	keys.Write([]byte("\x03"))
	scr.waitFor(t, at, "KeyboardInterrupt")
	res, err := proc.Wait()
	// Python ends with 1 or, since 3.12, dies of the SIGINT itself.
	if err != nil || res.ExitCode != 1 && res.Signal != "interrupt" {
		t.Errorf("after ^C: %v, status %s exit %d signal %q", err, res.Status, res.ExitCode, res.Signal)
	}
}

// Input that ends (a pipe given to a run with a terminal) ends on the
// terminal too: cat reads it and its end, and exits.
func TestAttackPTYInputEnds(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	for _, in := range []string{"line one\nline two\n", "no newline"} {
		scr := newScreen()
		proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
			Args: []string{"/bin/cat"}, Stdin: strings.NewReader(in), Stdout: scr,
			Terminal: &sandbox.Terminal{Rows: 24, Cols: 80}, Timeout: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		res, err := proc.Wait()
		if err != nil || res.Status != sandbox.StatusSucceeded {
			t.Errorf("%q: %v, status %s; want cat to end with its input", in, err, res.Status)
		}
		if want := strings.TrimSuffix(in, "\n"); !strings.Contains(strings.ReplaceAll(scr.String(), "\r\n", "\n"), want) {
			t.Errorf("%q: the terminal shows %q", in, scr)
		}
	}
}
