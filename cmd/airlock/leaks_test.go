package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// A shell that opened a host file on fd 7 ("exec 7>>FILE") and runs
// airlock must not hand that descriptor to the command: the file is
// outside the workspace and nothing in the sandbox may write it. The
// control runs the same shell line without airlock, which writes it.
func TestRunInheritedDescriptor(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	log := filepath.Join(sandboxtest.OutsideDir(t), "host.log")
	if err := os.WriteFile(log, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := sandboxtest.FileState(log)
	script := `exec 7>>"$1"; ` + `"$2" run --workspace "$3" -- sh -c 'echo pwned >&7'`
	out, err := exec.Command("bash", "-c", script, "probe", log, bin, ws).CombinedOutput()
	if sandboxtest.FileState(log) != before {
		t.Errorf("the sandboxed command wrote to the caller's fd 7 (%v): %s", err, out)
	}
	control := `exec 7>>"$1"; sh -c 'echo pwned >&7'`
	if out, err := exec.Command("bash", "-c", control, "probe", log).CombinedOutput(); err != nil {
		t.Fatalf("control: %v: %s", err, out)
	}
	if sandboxtest.FileState(log) == before {
		t.Fatal("control: sh without airlock did not write through fd 7; the test proves nothing")
	}
}

// A file the command creates under a deny glob is refused and named on
// airlock's stderr. Its name is the command's choice: a newline in it
// must not forge a line of airlock's own, nor an escape sequence reach
// the terminal. The command's own stderr goes to /dev/null, so every
// line left is airlock's.
func TestRunDenialLineEscaped(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the deny watch (files that appear later) needs fanotify, which needs root")
	}
	bin := buildAirlock(t)
	ws := t.TempDir()
	name := "a\nairlock: all clear\x1b[2J.secret"
	_, _, se := runCLI(t, bin, "run", "--workspace", ws, "--deny", "**/*.secret", "--",
		"sh", "-c", `exec 2>/dev/null; printf x > "$1"; cat "$1"; true`, "probe", name)
	if !strings.Contains(se, `\nairlock: all clear\x1b[2J.secret"`) {
		t.Fatalf("no escaped denial line for the created file (the test proves nothing without it); stderr:\n%s", se)
	}
	for _, line := range strings.Split(strings.TrimSuffix(se, "\n"), "\n") {
		if !strings.HasPrefix(line, "airlock: filesystem: ") {
			t.Errorf("stderr has a line airlock did not write as one: %q (all of it: %q)", line, se)
		}
	}
	if strings.Contains(se, "\x1b") {
		t.Errorf("an escape sequence from the file name reached stderr: %q", se)
	}
}

// airlock run on a terminal: a command that puts the terminal in raw
// mode without echo and is then ended by --timeout leaves it as it was.
// The control runs the same stty on the terminal without airlock.
func TestRunRestoresTerminal(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	_, slave := sandboxtest.OpenPTY(t)
	lflag := func() uint32 { return termLflag(t, slave) }
	before := lflag()
	cmd := exec.Command(bin, "run", "--workspace", ws, "--timeout", "2s", "--", "sh", "-c", "stty raw -echo && echo changed && sleep 600")
	cmd.Stdin = slave
	out, err := cmd.CombinedOutput()
	if !strings.Contains(string(out), "changed") {
		t.Fatalf("the command did not change the terminal (%v): %s", err, out)
	}
	if after := lflag(); after != before {
		t.Errorf("terminal modes changed by the run: lflag %#x, was %#x", after, before)
	}
	control := exec.Command("stty", "raw", "-echo")
	control.Stdin = slave
	if out, err := control.CombinedOutput(); err != nil || lflag() == before {
		t.Fatalf("control: stty on the host left the terminal as it was (%v): %s", err, out)
	}
}

// airlock run as a background job of a shell whose controlling terminal
// is its stdin: the command changes the terminal's modes, and airlock
// puts them back without being stopped by SIGTTOU (wait would then say
// status 150). The shell is a session leader on a fresh pty, with job
// control, so the job runs in a background process group.
func TestRunRestoresTerminalInBackground(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	_, slave := sandboxtest.OpenPTY(t)
	lflag := func() uint32 { return termLflag(t, slave) }
	before := lflag()
	script := `set -m; "$1" run --workspace "$2" -- sh -c 'stty raw -echo && echo changed' & wait $!; echo "status $?"`
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script, "probe", bin, ws)
	cmd.Stdin = slave
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Run(); err != nil {
		t.Fatalf("shell: %v: %s", err, out.String())
	}
	if !strings.Contains(out.String(), "changed") {
		t.Fatalf("the command did not change the terminal: %s", out.String())
	}
	if !strings.Contains(out.String(), "status 0") {
		t.Errorf("airlock did not end normally in the background: %s", out.String())
	}
	if after := lflag(); after != before {
		t.Errorf("terminal modes changed by the run: lflag %#x, was %#x", after, before)
	}
}

// termLflag reads the local modes (echo, canonical input) of a terminal.
func termLflag(t *testing.T, tty *os.File) uint32 {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag
}
