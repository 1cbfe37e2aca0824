package sandbox_test

import (
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// initReach tries to get at a process's descriptors and memory the ways a
// process of the same user may reach a dumpable one: opening
// /proc/PID/fd/N, reading /proc/PID/mem and environ, and pidfd_getfd. It
// prints "REACHED HOW" for each that worked, first for pid 1 (the
// sandbox's init) and then, as the control, for a child of its own.
const initReach = `import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
def reach(pid, who):
    # Listing /proc/PID/fd gives only numbers; what matters is opening
    # what they point at, so every number up to 64 is tried.
    for n in range(64):
        try:
            os.close(os.open("/proc/%d/fd/%d" % (pid, n), os.O_RDONLY))
            print(who, "REACHED fd-open")
            break
        except OSError:
            pass
    for f in ("environ", "mem"):
        try:
            with open("/proc/%d/%s" % (pid, f), "rb") as fh:
                fh.read(1)
            print(who, "REACHED", f)
        except OSError:
            pass
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return
    for n in range(64):
        fd = libc.syscall(438, pidfd, n, 0)  # pidfd_getfd
        if fd >= 0:
            print(who, "REACHED pidfd_getfd")
            break
reach(1, "init")
child = subprocess.Popen(["sleep", "30"], stdin=subprocess.PIPE)
reach(child.pid, "child")
child.kill()
`

// The sandbox's init (pid 1, the helper that became it) runs as the
// command's user and, on kernels without Landlock's thread sync, has
// threads outside the Landlock domain: a command that could take its
// descriptors, read its memory or ptrace it would step outside the
// sandbox. It is not dumpable, so none of that works; the command's own
// children stay reachable as usual (the control).
func TestAttackReachInit(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(initReach)})
	if !strings.Contains(o.Stdout, "child REACHED fd-open") {
		t.Fatalf("control: the command could not reach its own child; the test proves nothing: %s", o)
	}
	if strings.Contains(o.Stdout, "init REACHED") {
		t.Errorf("the command reached the sandbox's init: %s", o)
	}
}
