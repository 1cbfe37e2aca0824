//go:build linux

package approval

// This is the harness of the tests in terminal_pty_test.go. They put
// Terminal in front of a real pseudo-terminal, the way a person meets it:
// the test binary re-executes itself as a child whose controlling terminal
// is the slave side of a pty, so that Terminal{} with nil In and Out opens
// /dev/tty for real, while the test types on the master side and reads
// what the child shows there. The child reports what Approve returned on
// a pipe (fd 3), never on the terminal.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
)

const (
	// ptyChildEnv holds the child's ptySpec, as JSON, when the test binary
	// runs as a child of these tests.
	ptyChildEnv = "AIRLOCK_APPROVAL_PTY_CHILD"
	// ptyWorkspaceEnv is the child's workspace; "always" answers are saved
	// in its local policy file.
	ptyWorkspaceEnv = "AIRLOCK_APPROVAL_PTY_WORKSPACE"
	// ptyTimeout bounds every wait on the child: a prompt that does not
	// show, an answer that is not taken, a child that does not exit.
	ptyTimeout = 15 * time.Second
	// ptyCommand is what the child's agent asks to run.
	ptyCommand = "git push"
	// ptyReady is what the child shows on its terminal when it waits for
	// keys typed ahead of the prompt (ptySpec.TypeAhead), and ptyReturned
	// what it shows once Approve has returned (ptySpec.ReadAfter).
	ptyReady    = "child: type ahead now\n"
	ptyReturned = "child: Approve returned\n"
)

func TestMain(m *testing.M) {
	if env := os.Getenv(ptyChildEnv); env != "" {
		var spec ptySpec
		if err := json.Unmarshal([]byte(env), &spec); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(2)
		}
		os.Exit(ptyChild(spec))
	}
	os.Exit(m.Run())
}

// ptySpec is what a child does around its one call.
type ptySpec struct {
	// NoTTY says the child has no controlling terminal.
	NoTTY bool
	// HangUp makes the child wait, after the call, to see the SIGHUP of
	// the terminal's hang-up.
	HangUp bool
	// Raw puts the terminal in raw mode before the call, as a full-screen
	// program (Claude Code) leaves it.
	Raw bool
	// TypeAhead, when not zero, makes the child show ptyReady and wait
	// until that many bytes were typed before it asks.
	TypeAhead int
	// Command is what the agent asks to run; "" means ptyCommand.
	Command string
	// Cancel, when not zero, cancels the prompt after that long.
	Cancel time.Duration
	// ReadAfter, when not zero, makes the child show ptyReturned after the
	// call and then read that many bytes from its terminal itself.
	ReadAfter int
}

// ptyResult is what the child reports on its result pipe.
type ptyResult struct {
	// Pending is "kind target" of every requirement the Request carried.
	Pending []string
	// Verdict, For, Reason and Err are what Terminal.Approve returned.
	Verdict gate.Verdict
	For     time.Duration
	Reason  string
	Err     string
	// ApprovalRequired reports errors.Is(Err, gate.ErrApprovalRequired).
	ApprovalRequired bool
	// Effect and Approval are the gate's decision for the call.
	Effect   rules.Effect
	Approval string
	// Hangup reports that the child received SIGHUP.
	Hangup bool
	// ModeKept reports that the terminal's mode (termios) after the call
	// was the one before it; ModeErr says why it could not be compared.
	ModeKept bool
	ModeErr  string
	// ReadAfter is what the child read from its terminal after the call.
	ReadAfter string
}

// ptyChild is the child's whole life: one call decided by a gate whose
// approver is Terminal{}, reported on fd 3. It returns the exit code.
func ptyChild(spec ptySpec) int {
	result := os.NewFile(3, "result")
	hup := make(chan os.Signal, 1)
	// The child leads its session, so the kernel sends it SIGHUP when its
	// terminal hangs up, and by default that kills it before Terminal has
	// a say. Catching it shows what Terminal itself does, as in a process
	// that handles SIGHUP; the hang-up test also checks that it came.
	signal.Notify(hup, syscall.SIGHUP)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}

	var tty *os.File
	if !spec.NoTTY {
		var err error
		if tty, err = os.OpenFile("/dev/tty", os.O_RDWR, 0); err != nil {
			return fail(err)
		}
	}
	if spec.Raw {
		if err := makeRaw(tty); err != nil {
			return fail(err)
		}
	}
	var before *unix.Termios
	if tty != nil {
		var err error
		if before, err = termios(tty); err != nil {
			return fail(err)
		}
	}
	if spec.TypeAhead > 0 {
		fmt.Fprint(tty, ptyReady)
		if err := waitTyped(tty, spec.TypeAhead); err != nil {
			return fail(err)
		}
	}

	ws := os.Getenv(ptyWorkspaceEnv)
	command := spec.Command
	if command == "" {
		command = ptyCommand
	}
	var r ptyResult
	term := &Terminal{}
	e := &gate.Evaluator{
		Remember: &rules.Writer{Path: rules.LocalPath(ws)},
		Approver: Func(func(ctx context.Context, req gate.Request) (gate.Answer, error) {
			for _, p := range req.Pending {
				r.Pending = append(r.Pending, p.Requirement.Kind+" "+p.Requirement.Target)
			}
			if spec.Cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, spec.Cancel)
				defer cancel()
			}
			ans, err := term.Approve(ctx, req)
			r.Verdict, r.For, r.Reason = ans.Verdict, ans.For, ans.Reason
			if err != nil {
				r.Err = err.Error()
				r.ApprovalRequired = errors.Is(err, gate.ErrApprovalRequired)
			}
			return ans, err
		}),
	}
	d, _ := e.Decide(context.Background(), call(ws, command))
	r.Effect, r.Approval = d.Effect, d.Approval
	if before != nil {
		if after, err := termios(tty); err != nil {
			r.ModeErr = err.Error()
		} else {
			r.ModeKept = *after == *before
		}
	}
	if spec.ReadAfter > 0 {
		fmt.Fprint(tty, ptyReturned)
		b := make([]byte, spec.ReadAfter)
		n, err := io.ReadFull(tty, b)
		if err != nil {
			return fail(fmt.Errorf("reading the terminal after Approve: %w", err))
		}
		r.ReadAfter = string(b[:n])
	}
	wait := time.Duration(0)
	if spec.HangUp {
		wait = ptyTimeout / 3 // well before the parent gives up on the child
	}
	select {
	case <-hup:
		r.Hangup = true
	case <-time.After(wait):
	}
	if err := json.NewEncoder(result).Encode(r); err != nil {
		return fail(fmt.Errorf("writing the result: %w", err))
	}
	return 0
}

// termios returns the mode of the terminal f.
func termios(f *os.File) (*unix.Termios, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var t *unix.Termios
	var ioErr error
	if err := rc.Control(func(fd uintptr) { t, ioErr = unix.IoctlGetTermios(int(fd), unix.TCGETS) }); err != nil {
		return nil, err
	}
	if ioErr != nil {
		return nil, fmt.Errorf("TCGETS: %w", ioErr)
	}
	return t, nil
}

// makeRaw puts the terminal f in raw mode as cfmakeraw(3) does: no line
// editing, no echo, no signals, no translation of Enter's \r.
func makeRaw(f *os.File) error {
	t, err := termios(f)
	if err != nil {
		return err
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = 1, 0
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	if err := rc.Control(func(fd uintptr) { ioErr = unix.IoctlSetTermios(int(fd), unix.TCSETS, t) }); err != nil {
		return err
	}
	if ioErr != nil {
		return fmt.Errorf("TCSETS: %w", ioErr)
	}
	return nil
}

// waitTyped waits until n bytes typed on the terminal f wait to be read.
func waitTyped(f *os.File, n int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(ptyTimeout / 3)
	for {
		var queued int
		var ioErr error
		if err := rc.Control(func(fd uintptr) { queued, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
			return err
		}
		switch {
		case ioErr != nil:
			return fmt.Errorf("TIOCINQ: %w", ioErr)
		case queued >= n:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%d bytes typed ahead, want %d", queued, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// ptySession is one child on one pseudo-terminal, seen from the master
// side.
type ptySession struct {
	t      *testing.T
	ws     string
	master *os.File // nil once closed
	cmd    *exec.Cmd
	result <-chan []byte
	raw    strings.Builder // everything the terminal showed
	shown  strings.Builder // everything the terminal showed, \r removed
	unread string          // the part of shown that expect has not consumed
}

// openPTY opens a new pseudo-terminal and returns its master and slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("opening /dev/ptmx: %v", err)
	}
	// SyscallConn rather than Fd: Fd would put the master in blocking
	// mode, and read deadlines would no longer work.
	rc, err := master.SyscallConn()
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	var n int
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr != nil {
			ioErr = fmt.Errorf("unlocking the pty (TIOCSPTLCK): %w", ioErr)
			return
		}
		if n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN); ioErr != nil {
			ioErr = fmt.Errorf("naming the pty (TIOCGPTN): %w", ioErr)
		}
	})
	if err = errors.Join(err, ioErr); err != nil {
		master.Close()
		t.Fatal(err)
	}
	name := fmt.Sprintf("/dev/pts/%d", n)
	slave, err = os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		master.Close()
		t.Fatalf("opening %s: %v", name, err)
	}
	return master, slave
}

// startChild re-executes the test binary to follow spec, with ws as its
// workspace, and returns once it runs. Its result pipe is read in the
// background. cmd is completed with the environment, fd 3 and the
// result reader.
func startChild(t *testing.T, spec ptySpec, ws string, cmd *exec.Cmd) <-chan []byte {
	t.Helper()
	env, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	resultR, resultW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer resultW.Close()
	cmd.Env = append(os.Environ(), ptyChildEnv+"="+string(env), ptyWorkspaceEnv+"="+ws)
	cmd.ExtraFiles = append([]*os.File{resultW}, cmd.ExtraFiles...)
	if err := cmd.Start(); err != nil {
		resultR.Close()
		t.Fatalf("starting the child: %v", err)
	}
	result := make(chan []byte, 1)
	go func() {
		defer resultR.Close()
		b, _ := io.ReadAll(resultR)
		result <- b
	}()
	return result
}

// testBinary is the path of the running test binary.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// startOnPTY starts a child following spec whose controlling terminal is a
// new pty. With
// stdio, the pty is also the child's stdin, stdout and stderr, as when a
// person runs the agent in a terminal; without, the child's stdin is
// agentInput and its stdout and stderr /dev/null, as when the agent runs
// airlock as a hook, and the pty is only reachable through /dev/tty.
func startOnPTY(t *testing.T, spec ptySpec, stdio bool, agentInput string) *ptySession {
	t.Helper()
	master, slave := openPTY(t)
	defer slave.Close()
	s := &ptySession{t: t, ws: filepath.Join(t.TempDir(), "ws"), master: master}
	t.Cleanup(func() {
		if s.master != nil {
			s.master.Close()
		}
	})
	s.cmd = exec.Command(testBinary(t))
	attr := &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if stdio {
		s.cmd.Stdin, s.cmd.Stdout, s.cmd.Stderr = slave, slave, slave
	} else {
		s.cmd.Stdin = strings.NewReader(agentInput)
		s.cmd.ExtraFiles = []*os.File{slave} // fd 4, after the result pipe
		attr.Ctty = 4
	}
	s.cmd.SysProcAttr = attr
	s.result = startChild(t, spec, s.ws, s.cmd)
	// Only the child holds the slave now: when it exits, reading the
	// master ends.
	slave.Close()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			s.cmd.Process.Kill()
			s.cmd.Wait()
		}
	})
	return s
}

// read adds what the terminal shows next to shown and unread.
func (s *ptySession) read(deadline time.Time) error {
	if err := s.master.SetReadDeadline(deadline); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, err := s.master.Read(buf)
	s.raw.Write(buf[:n])
	text := strings.ReplaceAll(string(buf[:n]), "\r", "")
	s.shown.WriteString(text)
	s.unread += text
	return err
}

// expect waits until the terminal shows want and returns what it showed
// since the last expect, up to and including want.
func (s *ptySession) expect(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(ptyTimeout)
	for {
		if i := strings.Index(s.unread, want); i >= 0 {
			got := s.unread[:i+len(want)]
			s.unread = s.unread[i+len(want):]
			return got
		}
		if err := s.read(deadline); err != nil {
			s.t.Fatalf("waiting for the terminal to show %q: %v; it showed:\n%s", want, err, s.shown.String())
		}
	}
}

// typeKeys types keys on the terminal.
func (s *ptySession) typeKeys(keys string) {
	s.t.Helper()
	if _, err := s.master.Write([]byte(keys)); err != nil {
		s.t.Fatalf("typing %q: %v", keys, err)
	}
}

// hangUp closes the master: the terminal goes away.
func (s *ptySession) hangUp() {
	s.t.Helper()
	if err := s.master.Close(); err != nil {
		s.t.Fatal(err)
	}
	s.master = nil
}

// wait waits for the child to exit, killing it if it overruns, and
// returns its result.
func (s *ptySession) wait() ptyResult {
	s.t.Helper()
	r := waitChild(s.t, s.cmd, s.result, s.shown.String)
	if s.master != nil {
		// Collect what it showed after the last expect, for failures.
		deadline := time.Now().Add(ptyTimeout)
		for s.read(deadline) == nil {
		}
	}
	return r
}

// waitChild waits for cmd to exit within ptyTimeout and decodes its
// result. A child that overruns is killed by its pid and fails the test:
// it hung. shown says what the child showed, for failure messages.
func waitChild(t *testing.T, cmd *exec.Cmd, result <-chan []byte, shown func() string) ptyResult {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("child: %v; it showed:\n%s", err, shown())
		}
	case <-time.After(ptyTimeout):
		killErr := cmd.Process.Kill()
		<-exited
		t.Fatalf("the child did not exit within %v: it hangs (killed pid %d: %v); it showed:\n%s",
			ptyTimeout, cmd.Process.Pid, killErr, shown())
	}
	var b []byte
	select {
	case b = <-result:
	case <-time.After(ptyTimeout):
		t.Fatal("the result pipe was not closed")
	}
	var r ptyResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("child result %q: %v; it showed:\n%s", b, err, shown())
	}
	return r
}

// savedRules lists the rules in ws's local policy file, as "effect match",
// and when the first one expires.
func savedRules(t *testing.T, ws string) (saved string, expires time.Time) {
	t.Helper()
	set, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range set.Rules() {
		s := string(r.Effect) + " " + r.Match
		if !r.Expires.IsZero() {
			s += " (expires)"
			if expires.IsZero() {
				expires = r.Expires
			}
		}
		got = append(got, s)
	}
	return strings.Join(got, ","), expires
}
