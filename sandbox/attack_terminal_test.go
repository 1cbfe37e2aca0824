package sandbox_test

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// ttyChange puts its stdin, a terminal, in raw mode without echo, sets
// O_NONBLOCK on it (the open file the caller shares) and makes it
// exclusive, then prints "changed" and, given an argument, sleeps.
const ttyChange = `import fcntl, os, sys, termios, time, tty
tty.setraw(0)
fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK)
fcntl.ioctl(0, termios.TIOCEXCL)
print("changed", flush=True)
if len(sys.argv) > 1:
    time.sleep(float(sys.argv[1]))
`

// ttyState is what the host sees of the terminal: its local and input
// modes, the file's O_NONBLOCK and exclusive mode.
type ttyState struct {
	lflag, iflag uint32
	nonblock     bool
	excl         int
}

// rawFD is f's descriptor. Not f.Fd(), which would clear O_NONBLOCK.
func rawFD(t *testing.T, f *os.File) int {
	t.Helper()
	fd := -1
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(u uintptr) { fd = int(u) })
	return fd
}

// openBlockingPTY opens a terminal whose slave is in blocking mode, as a
// shell's terminal is (os.OpenFile makes it non-blocking for Go's poller).
func openBlockingPTY(t *testing.T) *os.File {
	t.Helper()
	_, slave := sandboxtest.OpenPTY(t)
	must(t, unix.SetNonblock(rawFD(t, slave), false))
	return slave
}

func readTTY(t *testing.T, f *os.File) ttyState {
	t.Helper()
	fd := rawFD(t, f)
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatal(err)
	}
	excl, err := unix.IoctlGetInt(fd, unix.TIOCGEXCL)
	if err != nil {
		t.Fatal(err)
	}
	return ttyState{lflag: tio.Lflag, iflag: tio.Iflag, nonblock: fl&unix.O_NONBLOCK != 0, excl: excl}
}

// A command whose stdin is the caller's terminal can change the
// terminal's modes; they must be as before once the run ends, whether
// the command exits, the wall-clock budget ends it, or a signal does.
// The control runs the change on the host, where it stays.
func TestAttackTerminalModes(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	slave := openBlockingPTY(t)
	before := readTTY(t, slave)

	control := sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Py(ttyChange), Stdin: slave})
	if changed := readTTY(t, slave); changed == before || control.ExitCode != 0 {
		t.Fatalf("control: the host run left the terminal as it was (%+v; %s); the test proves nothing", changed, control)
	}
	reset := func() {
		t.Helper()
		slave = openBlockingPTY(t)
		before = readTTY(t, slave)
	}

	t.Run("exits", func(t *testing.T) {
		reset()
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(ttyChange), Stdin: slave})
		if o.Stdout != "changed\n" {
			t.Fatalf("the probe did not change the terminal: %s", o)
		}
		if after := readTTY(t, slave); after != before {
			t.Errorf("terminal changed by the run: %+v, was %+v", after, before)
		}
	})
	t.Run("timed out", func(t *testing.T) {
		reset()
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(ttyChange, "600"), Stdin: slave, Timeout: 2 * time.Second})
		if o.Result.Status != sandbox.StatusTimedOut || o.Stdout != "changed\n" {
			t.Fatalf("want a timed-out run that changed the terminal: %s", o)
		}
		if after := readTTY(t, slave); after != before {
			t.Errorf("terminal changed by the run: %+v, was %+v", after, before)
		}
	})
	t.Run("signalled", func(t *testing.T) {
		reset()
		proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{Args: sandboxtest.Py(ttyChange, "600"), Stdin: slave, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := proc.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); readTTY(t, slave).excl == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				proc.Kill()
				proc.Wait()
				t.Fatal("the probe never changed the terminal")
			}
		}
		if err := proc.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		res, err := proc.Wait()
		if err != nil || res.Signal != "terminated" {
			t.Fatalf("want a run ended by SIGTERM: %v %+v", err, res)
		}
		if after := readTTY(t, slave); after != before {
			t.Errorf("terminal changed by the run: %+v, was %+v", after, before)
		}
	})
}
