package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// userTTY is airlock run started the way a person at a terminal starts
// it: on a pty of the test's own (stdin, stdout and stderr, the
// controlling terminal, 30x100), read through its master.
type userTTY struct {
	master, slave *os.File
	cmd           *exec.Cmd
	mu            sync.Mutex
	out           strings.Builder
	done          chan struct{}
}

func startUserTTY(t *testing.T, dir string, argv ...string) *userTTY {
	t.Helper()
	master, slave := sandboxtest.OpenPTY(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 30, Col: 100}); err != nil {
		t.Fatal(err)
	}
	if argv[0] == "setpriv" {
		// A user's terminal is the user's own.
		name, err := os.Readlink("/proc/self/fd/" + fmt.Sprint(slave.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(name, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	u := &userTTY{master: master, slave: slave, done: make(chan struct{})}
	u.cmd = exec.Command(argv[0], argv[1:]...)
	u.cmd.Dir = dir
	u.cmd.Stdin, u.cmd.Stdout, u.cmd.Stderr = slave, slave, slave
	u.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := u.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(u.done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			u.mu.Lock()
			u.out.Write(buf[:max(n, 0)])
			u.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { u.cmd.Process.Kill(); u.cmd.Wait() })
	return u
}

func (u *userTTY) screen() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.out.String()
}

// waitFor waits for want on the screen after from and returns where it
// ends there.
func (u *userTTY) waitFor(t *testing.T, from int, want string) int {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		s := u.screen()
		if i := strings.Index(s[min(from, len(s)):], want); i >= 0 {
			return from + i + len(want)
		}
	}
	t.Fatalf("no %q on the terminal after 30s:\n%q", want, u.screen())
	return 0
}

func (u *userTTY) send(t *testing.T, keys string) {
	t.Helper()
	if _, err := u.master.WriteString(keys); err != nil {
		t.Fatal(err)
	}
}

// exitWithin bounds exit: a process that never ends (a shell that did
// not get its "exit", an airlock that stopped itself again) fails the
// test with the transcript instead of hanging it.
const exitWithin = 60 * time.Second

// exit waits for the process the test started on the pty (airlock, or
// the shell airlock runs under) to end and returns its status.
func (u *userTTY) exit(t *testing.T) int {
	t.Helper()
	waited := make(chan error, 1)
	go func() { waited <- u.cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-time.After(exitWithin):
		_ = u.cmd.Process.Kill()
		<-waited
		t.Fatalf("%s did not end within %v; the terminal so far:\n%q", u.cmd.Args[0], exitWithin, u.screen())
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// termios is the user's terminal's modes, as the host sees them.
func (u *userTTY) termios(t *testing.T) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(u.slave.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return *tio
}

// TestRunTTY: airlock run at a terminal gives the command one of its
// own: bash -i has job control, tty names a pty, stty sees the window
// size and its change, python's output is line-buffered, ^C reaches the
// command, and the user's terminal is as before when airlock ends, by
// exit, ^C or --timeout. --no-tty keeps pipes. As root and uid 65534.
func TestRunTTY(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	ws := t.TempDir()
	users := []struct {
		name string
		ws   string
		argv func(args ...string) []string
	}{{"root", ws, func(args ...string) []string { return append([]string{bin}, args...) }}}
	if os.Geteuid() == 0 {
		uws, argv := unprivilegedCommand(t, bin)
		users = append(users, struct {
			name string
			ws   string
			argv func(args ...string) []string
		}{"uid 65534", uws, func(args ...string) []string { return append([]string{"setpriv"}, argv(args...)...) }})
	}
	for _, user := range users {
		t.Run(user.name, func(t *testing.T) {
			run := func(args ...string) *userTTY {
				return startUserTTY(t, user.ws, user.argv(append([]string{"run", "--workspace", user.ws}, args...)...)...)
			}
			t.Run("bash", func(t *testing.T) {
				u := run("--", "bash", "--norc", "--noprofile", "-i")
				before := u.termios(t)
				at := u.waitFor(t, 0, "bash-")
				u.send(t, "tty; stty size; sleep 100 &\n")
				at = u.waitFor(t, at, "/dev/pts/")
				at = u.waitFor(t, at, "30 100")
				at = u.waitFor(t, at, "[1] ")
				u.send(t, "jobs\n")
				at = u.waitFor(t, at, "[1]+  Running")
				if err := unix.IoctlSetWinsize(int(u.master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(300 * time.Millisecond) // the SIGWINCH reaches airlock
				u.send(t, "stty size; exit 3\n")
				u.waitFor(t, at, "40 120")
				if code := u.exit(t); code != 3 {
					t.Errorf("exit %d, want bash's 3:\n%q", code, u.screen())
				}
				if s := u.screen(); strings.Contains(s, "no job control") {
					t.Errorf("bash has no job control:\n%q", s)
				}
				if after := u.termios(t); after != before {
					t.Errorf("the user's terminal was left changed (raw mode not restored): %+v, was %+v", after, before)
				}
			})
			t.Run("python ^C", func(t *testing.T) {
				u := run("--", "python3", "-c", `import time; print("serving"); time.sleep(600)`)
				before := u.termios(t)
				u.waitFor(t, 0, "serving")
				u.send(t, "\x03")
				u.waitFor(t, 0, "KeyboardInterrupt")
				if code := u.exit(t); code != 1 && code != 130 {
					t.Errorf("exit %d after ^C, want python's 1 or 130:\n%q", code, u.screen())
				}
				if after := u.termios(t); after != before {
					t.Errorf("the user's terminal was left changed after ^C: %+v, was %+v", after, before)
				}
			})
			t.Run("timeout", func(t *testing.T) {
				u := run("--timeout", "2s", "--", "sh", "-c", "stty raw -echo; echo raw; sleep 600")
				before := u.termios(t)
				u.waitFor(t, 0, "raw")
				if code := u.exit(t); code != exitTimeout {
					t.Errorf("exit %d, want %d:\n%q", code, exitTimeout, u.screen())
				}
				if after := u.termios(t); after != before {
					t.Errorf("the user's terminal was left changed after --timeout: %+v, was %+v", after, before)
				}
			})
			t.Run("no-tty", func(t *testing.T) {
				for _, flag := range []string{"--no-tty", "--tty=never"} {
					u := run(flag, "--", "sh", "-c", "tty; echo end")
					u.waitFor(t, 0, "end")
					u.exit(t)
					if !strings.Contains(u.screen(), "not a tty") {
						t.Errorf("%s: the command has a terminal:\n%q", flag, u.screen())
					}
				}
			})
		})
	}
}

// TestTTYModeFlag: --tty's values.
func TestTTYModeFlag(t *testing.T) {
	for _, c := range []struct {
		in   string
		want ttyMode
		err  bool
	}{{"auto", ttyAuto, false}, {"always", ttyAlways, false}, {"never", ttyNever, false}, {"true", ttyAlways, false}, {"false", ttyNever, false}, {"yes", "", true}} {
		var m ttyMode
		err := m.Set(c.in)
		if (err != nil) != c.err || (!c.err && m != c.want) {
			t.Errorf("Set(%q) = %q, %v; want %q (error %v)", c.in, m, err, c.want, c.err)
		}
	}
}

// TestCRLFWriter: airlock's lines on a raw terminal end in \r\n, once.
func TestCRLFWriter(t *testing.T) {
	for in, want := range map[string]string{"a\n": "a\r\n", "a\r\nb\n": "a\r\nb\r\n", "no newline": "no newline", "\n\n": "\r\n\r\n"} {
		var b strings.Builder
		n, err := crlfWriter{&b}.Write([]byte(in))
		if err != nil || n != len(in) || b.String() != want {
			t.Errorf("Write(%q) = %d, %v, wrote %q; want %q", in, n, err, b.String(), want)
		}
	}
}
