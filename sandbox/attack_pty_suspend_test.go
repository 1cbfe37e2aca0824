package sandbox_test

import (
	"context"
	"io"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// startPTYSuspend is startPTY with a Terminal.Suspend that reports each
// call on suspended and returns once resume is sent to.
func startPTYSuspend(t *testing.T, sb *sandboxtest.Sandbox, args ...string) (*sandbox.Process, *screen, *io.PipeWriter, chan struct{}, chan struct{}) {
	t.Helper()
	in, keys := io.Pipe()
	scr := newScreen()
	suspended, resume := make(chan struct{}, 4), make(chan struct{})
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
		Args: args, Stdin: in, Stdout: scr, Stderr: scr, Timeout: 2 * time.Minute,
		Terminal: &sandbox.Terminal{Rows: 30, Cols: 100, Suspend: func() {
			suspended <- struct{}{}
			<-resume
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatalf("start with a terminal: %v", err)
	}
	t.Cleanup(func() { keys.Close(); proc.Kill() })
	return proc, scr, keys, suspended, resume
}

func highestTick(s string) int {
	n := -1
	for _, m := range regexp.MustCompile(`tick (\d+)`).FindAllStringSubmatch(s, -1) {
		if v, _ := strconv.Atoi(m[1]); v > n {
			n = v
		}
	}
	return n
}

// With Terminal.Suspend, ^Z on a command that is not a shell calls it,
// the command is stopped until it returns and goes on after; ^Z for a
// job of a shell in the sandbox is the shell's, as without it.
func TestAttackPTYSuspendHook(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	src := "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\n"
	_, scr, keys, suspended, resume := startPTYSuspend(t, sb, sandboxtest.Python, "-c", src)
	at := scr.waitFor(t, 0, "tick 1")
	keys.Write([]byte("\x1a"))
	select {
	case <-suspended:
	case <-time.After(30 * time.Second):
		t.Fatalf("^Z did not call Terminal.Suspend:\n%q", scr.String())
	}
	stopped := highestTick(scr.String())
	time.Sleep(time.Second) // five ticks, were it running
	if now := highestTick(scr.String()); now != stopped {
		t.Errorf("the command went on during Suspend: tick %d, then tick %d", stopped, now)
	}
	resume <- struct{}{}
	at = scr.waitFor(t, at, "tick "+strconv.Itoa(stopped+2))
	keys.Write([]byte("\x03"))
	scr.waitFor(t, at, "KeyboardInterrupt")

	// A shell's job: the shell stops it and says so; Suspend is not called.
	_, scr, keys, suspended, _ = startPTYSuspend(t, sb, "bash", "--norc", "--noprofile", "-i")
	at = scr.waitFor(t, 0, "bash-")
	keys.Write([]byte("echo start-$((1+1)); sleep 100\n"))
	at = scr.waitFor(t, at, "start-2")
	time.Sleep(300 * time.Millisecond) // sleep is the foreground job by then
	keys.Write([]byte("\x1a"))
	scr.waitFor(t, at, "Stopped")
	select {
	case <-suspended:
		t.Error("^Z for a shell's job called Terminal.Suspend")
	default:
	}
	keys.Write([]byte("exit\n"))
}
