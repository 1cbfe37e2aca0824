package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenWritesWaitsForTheCall: the permission event reaches the
// supervisor before the opening thread is asleep in its call, when
// /proc/TID/syscall still says "running". openWrites must wait until it
// shows the call, not take "running" for an unknown open (which the
// hard-link check refuses as a write: git's read-only opens of a cloned
// pack failed so under load). Here a process spins, then blocks in a
// read-only open of a FIFO; asked while it spins, openWrites must answer
// with that open.
func TestOpenWritesWaitsForTheCall(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Say so on stdout, spin for 5 ms (well inside openWrites's 20 ms),
	// then open.
	cmd := exec.Command("/usr/bin/python3", "-c", `
import sys, time
sys.stdout.write("x"); sys.stdout.flush()
end = time.monotonic() + 0.005
while time.monotonic() < end:
    pass
open(sys.argv[1], "rb")
`, fifo)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Skipf("python3: %v", err)
	}
	defer func() {
		// Opening the FIFO's other end lets the open return.
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		cmd.Wait()
	}()
	if _, err := out.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// The control: the process is spinning when openWrites is asked.
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	if !strings.HasPrefix(string(b), "running") {
		t.Skipf("the process was not running when asked (%q): cannot set the race up here", b)
	}
	write, known := openWrites(pid)
	if !known || write {
		t.Errorf("openWrites on a thread about to open for reading = (write %v, known %v), want (false, true)", write, known)
	}
}
