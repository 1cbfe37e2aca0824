package sandbox_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
)

// TestAttackTerminalWrite: a terminal on stdin was handed to the command
// open for writing too, so 200 KB written to fd 0 reached the user's
// terminal under an output budget of 1 KiB, with exit 0. The command now
// gets the terminal open for reading only. Evidence: what arrives at the
// terminal's master side, which the control's writes reach in full; the
// command still reads its input from the terminal.
func TestAttackTerminalWrite(t *testing.T) {
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Output = 1024 })
	master, slave := sandboxtest.OpenPTY(t)
	must(t, unix.SetNonblock(rawFD(t, slave), false)) // as a shell's terminal is
	var got atomic.Int64
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := master.Read(buf)
			got.Add(int64(max(n, 0)))
			if err != nil {
				return
			}
		}
	}()
	const size = 200000
	flood := sandboxtest.Probe{Args: sandboxtest.Sh(`{ head -c 200000 /dev/zero | tr '\0' x; } >&0; echo 'reopened' > /proc/self/fd/0; true`), Stdin: slave}
	h := sb.Host(t, flood)
	if n := waitCount(&got, size); n < size {
		t.Fatalf("control: %d of %d bytes written to fd 0 on the host reached the terminal: %s", n, size, h)
	}
	got.Store(0)
	o := sb.Run(t, flood)
	time.Sleep(200 * time.Millisecond) // what was written arrives within this
	if n := got.Load(); n > 1024 {
		t.Errorf("ATTACK SUCCEEDED: %d bytes written to fd 0 reached the terminal past an output budget of 1 KiB\n%s", n, o)
	}

	if _, err := master.Write([]byte("typed\n")); err != nil {
		t.Fatal(err)
	}
	o = sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`read line; echo "read=$line"`), Stdin: slave})
	if !strings.Contains(o.Stdout, "read=typed") {
		t.Errorf("the command cannot read its terminal stdin:\n%s", o)
	}
}

// waitCount waits up to two seconds for c to reach n and returns it.
func waitCount(c *atomic.Int64, n int64) int64 {
	for i := 0; i < 200 && c.Load() < n; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return c.Load()
}
