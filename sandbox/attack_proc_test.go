package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// Reading host files through another process's /proc entries: the root
// directory of a host process (/proc/PID/root leads into its view of the
// filesystem) and the environment of a host process started with a secret
// in it. The targets are host processes the test starts itself, the same
// user's, which the host lets any user read; inside, the sandbox's own
// PID 1 and the test process are tried as well.
func TestAttackReadThroughProc(t *testing.T) {
	sb, sec := attackTarget(t, nil)
	secret := sandboxtest.Marker(t, "environ")
	host := sandboxtest.StartHostProcess(t, sandboxtest.Marker(t, "proc-target"), "AIRLOCK_PROBE_TOKEN="+secret)
	hostPid := fmt.Sprint(host.Process.Pid)

	t.Run("proc-pid-root", func(t *testing.T) {
		const script = `f=$1; shift; for pid; do cat "/proc/$pid/root$f"; done`
		requireControl(t, sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(script, sec.SSHKey, hostPid)}), sec.Value)
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(script, sec.SSHKey, hostPid, "1", fmt.Sprint(os.Getpid()))})
		requireNotIn(t, o, sec.Value)
		requireFailed(t, o)
	})

	t.Run("proc-pid-environ", func(t *testing.T) {
		const script = `for pid; do tr '\0' '\n' < "/proc/$pid/environ"; done`
		requireControl(t, sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(script, hostPid)}), secret)
		// Inside, every process there is to see as well.
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(script+`; for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done`, hostPid)})
		requireNotIn(t, o, secret)
	})
}

// Seeing host processes: a host process with a unique argv must not show
// up in ps or /proc inside.
func TestAttackSeeHostProcesses(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	marker := sandboxtest.Marker(t, "visible")
	sandboxtest.StartHostProcess(t, marker)
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`ps -eo pid,args; for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done`)}
	requireControl(t, sb.Host(t, p), marker)
	requireNotIn(t, sb.Run(t, p), marker)
}

// Signalling host processes: kill -0 and kill -TERM of a host pid. The
// control kills a second, sacrificial host process; the victim of the
// sandboxed run must still be alive afterwards.
func TestAttackSignalHostProcess(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	victim := sandboxtest.StartHostProcess(t, sandboxtest.Marker(t, "victim"))
	sacrifice := sandboxtest.StartHostProcess(t, sandboxtest.Marker(t, "sacrifice"))
	probe := func(pid int) sandboxtest.Probe {
		return sandboxtest.Probe{Args: sandboxtest.Sh(`kill -0 "$1" && echo REACHED; kill -TERM "$1" && echo SENT`, fmt.Sprint(pid))}
	}
	requireControl(t, sb.Host(t, probe(sacrifice.Process.Pid)), "SENT")
	if !waitDead(sacrifice.Process.Pid, 2*time.Second) {
		t.Fatalf("positive control failed: the host process %d survived kill -TERM", sacrifice.Process.Pid)
	}
	o := sb.Run(t, probe(victim.Process.Pid))
	requireNotIn(t, o, "REACHED", "SENT")
	time.Sleep(100 * time.Millisecond) // a signal, had one been sent, has landed
	if !sandboxtest.Alive(victim.Process.Pid) {
		t.Errorf("ATTACK SUCCEEDED: the host process %d died after the sandboxed run signalled it\n%s", victim.Process.Pid, o)
	}
}

func waitDead(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !sandboxtest.Alive(pid) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// ptrace: attaching to a child of one's own, which the host allows any
// user. The seccomp filter refuses ptrace with EPERM.
func TestAttackPtrace(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	const src = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
r = libc.ptrace(16, child, None, None)  # PTRACE_ATTACH
err = ctypes.get_errno()
os.kill(child, 9)
os.waitpid(child, 0)
if r == 0:
    print("ATTACHED")
    sys.exit(0)
print("ptrace refused: errno=%d" % err)
sys.exit(1)
`
	p := sandboxtest.Probe{Args: sandboxtest.Py(src)}
	requireControl(t, sb.Host(t, p), "ATTACHED")
	o := sb.Run(t, p)
	requireNotIn(t, o, "ATTACHED")
	if !strings.Contains(o.Stdout, fmt.Sprintf("errno=%d\n", unix.EPERM)) {
		t.Errorf("ptrace should fail with EPERM (the seccomp filter's answer)\n%s", o)
	}
}

// Processes that try to outlive the run: a setsid nohup'd one and a
// double-forked one, each with a unique argv. The host sees them while the
// run is alive (so the probe really made them) and must see none after
// Wait, also when the run ends by its timeout.
func TestAttackDetachedSurvivors(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	const script = `
setsid nohup ` + sandboxtest.Python + ` -c 'import time; time.sleep(1000)' "$1" >/dev/null 2>&1 </dev/null &
( ( ` + sandboxtest.Python + ` -c 'import time; time.sleep(1000)' "$2" >/dev/null 2>&1 </dev/null & ) & )
sleep "$3"
echo DETACHED`
	for _, tc := range []struct {
		name    string
		linger  string // how long the probe waits after detaching
		timeout time.Duration
		status  sandbox.Status
	}{
		{"after-exit", "0.3", 0, sandbox.StatusSucceeded},
		{"after-timeout", "60", 1500 * time.Millisecond, sandbox.StatusTimedOut},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m1, m2 := sandboxtest.Marker(t, "setsid"), sandboxtest.Marker(t, "doublefork")
			t.Cleanup(func() { sandboxtest.KillProcs(m1); sandboxtest.KillProcs(m2) })
			control := sandboxtest.Probe{Args: sandboxtest.Sh(script, m1, m2, "0.3")}
			requireControl(t, sb.Host(t, control), "DETACHED")
			for _, m := range []string{m1, m2} {
				if sandboxtest.WaitFor(m, 2*time.Second) == 0 {
					t.Fatalf("positive control failed: the detached process %s did not outlive the probe on the host", m)
				}
				sandboxtest.KillProcs(m)
				if left := sandboxtest.WaitGone(m, 2*time.Second); len(left) > 0 {
					t.Fatalf("could not end the control's process %s: %v", m, left)
				}
			}

			run := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(script, m1, m2, tc.linger), Timeout: tc.timeout})
			for _, m := range []string{m1, m2} {
				if sandboxtest.WaitFor(m, 5*time.Second) == 0 {
					t.Errorf("the sandboxed probe never started %s (seen from the host), so the test proves nothing", m)
				}
			}
			o := run.Wait()
			for _, m := range []string{m1, m2} {
				if left := sandboxtest.Procs(m); len(left) > 0 {
					t.Errorf("ATTACK SUCCEEDED: %s survived the run as host pids %v\n%s", m, left, o)
				}
			}
			if o.Result.Status != tc.status {
				t.Errorf("status %s, want %s\n%s", o.Result.Status, tc.status, o)
			}
		})
	}
}

// A fork bomb under a 64-process budget. The bounded bomb (a binary tree
// of 2^8 sleeping leaves, about 500 processes at once) has a host
// control; the classic unbounded one cannot be run on the host, and the
// bounded one stands as its control. Host-side evidence: the most
// processes ever seen in the run's pid namespace, the host still starting
// a process promptly during the bomb, and nothing left after Wait.
func TestAttackForkBomb(t *testing.T) {
	const budget = 64
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Pids = budget })
	degraded := sb.Degraded(profile.ResourceLimits)
	const bounded = `
out=$1 depth=$2
f() { if [ "$1" -eq 0 ]; then sleep 1; echo leaf >> "$out"; return; fi; f $(($1-1)) & f $(($1-1)); wait; }
f "$depth"
n=$(wc -l < "$out"); echo "leaves=$n"; [ "$n" -eq $((1 << depth)) ]`

	t.Run("bounded", func(t *testing.T) {
		marker := sandboxtest.Marker(t, "bomb")
		leaves := filepath.Join(t.TempDir(), "leaves")
		c := sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(bounded, leaves, "8", marker)})
		requireControl(t, c, "leaves=256")

		o, peak := bomb(t, sb, sandboxtest.Probe{Args: sandboxtest.Sh(bounded, "/tmp/leaves", "8", marker), Timeout: 30 * time.Second}, marker)
		requireNotIn(t, o, "leaves=256")
		checkPeak(t, peak, budget)
		want := sandbox.StatusLimitExceeded
		if degraded {
			// RLIMIT_NPROC refuses the forks, but without a cgroup
			// nothing counts them: the run is merely failed.
			want = sandbox.StatusFailed
		}
		if o.Result.Status != want {
			t.Errorf("status %s, want %s (resource-limits %s)\n%s", o.Result.Status, want, sb.Executor.Report().Status(profile.ResourceLimits).Status, o)
		}
		if !degraded && !hasDenial(o.Result, "pids") {
			t.Errorf("no pids denial in the Result: %+v", o.Result.Denials)
		}
	})

	t.Run("classic", func(t *testing.T) {
		marker := sandboxtest.Marker(t, "bomb")
		p := sandboxtest.Probe{Args: sandboxtest.Sh(`f() { f | f & }; f; sleep 60`, marker), Timeout: 3 * time.Second}
		o, peak := bomb(t, sb, p, marker)
		checkPeak(t, peak, budget)
		// The bomb runs until the wall-clock budget ends it, unless the
		// budget is full when the shell forks its "sleep 60": then the
		// shell gives up ("Cannot fork") and the run ends at the pids
		// limit. Which comes first is a race the host's load decides;
		// either way the budget held, and the Result must say which.
		switch o.Result.Status {
		case sandbox.StatusTimedOut:
		case sandbox.StatusLimitExceeded:
			if !degraded && !hasDenial(o.Result, "pids") {
				t.Errorf("status %s with no pids denial in the Result: %+v", o.Result.Status, o.Result.Denials)
			}
		case sandbox.StatusFailed:
			// Without a cgroup, RLIMIT_NPROC refuses the forks and
			// nothing counts them (as in the bounded case).
			if !degraded {
				t.Errorf("status %s, want %s or %s\n%s", o.Result.Status, sandbox.StatusTimedOut, sandbox.StatusLimitExceeded, o)
			}
		default:
			t.Errorf("status %s, want %s (or %s at the pids limit): the bomb runs until a budget ends it\n%s",
				o.Result.Status, sandbox.StatusTimedOut, sandbox.StatusLimitExceeded, o)
		}
	})
}

// bomb runs p in the sandbox and watches it from the host: the largest
// number of processes in its pid namespace, and how long the host takes to
// start a process meanwhile. After Wait nothing of it may be left.
func bomb(t *testing.T, sb *sandboxtest.Sandbox, p sandboxtest.Probe, marker string) (sandboxtest.Outcome, int64) {
	t.Helper()
	// The bomb waits for the test to hold its pid namespace (a file in
	// the workspace, its working directory): a bomb its budget ends at
	// once (RLIMIT_NPROC, unprivileged) could otherwise be gone before
	// the test saw it.
	gate := "bomb-gate-" + marker
	p.Args = append([]string(nil), p.Args...)
	p.Args[2] = "while [ ! -e " + gate + " ]; do sleep 0.02; done; " + p.Args[2]
	run := sb.Start(t, p)
	// A bound, not a timing: on a loaded host the sandbox takes seconds to start.
	pid := sandboxtest.WaitFor(marker, 30*time.Second)
	if pid == 0 {
		t.Fatal("the bomb's first process never appeared on the host")
	}
	ns := sandboxtest.OpenPidNamespace(t, pid)
	must(t, os.WriteFile(filepath.Join(sb.Workspace, gate), nil, 0o644))
	defer os.Remove(filepath.Join(sb.Workspace, gate))
	sampler := sandboxtest.Sample(2*time.Millisecond, func() int64 { return int64(ns.Procs()) })
	var slowest time.Duration
	for i := 0; i < 5; i++ {
		start := time.Now()
		if err := exec.Command("/bin/true").Run(); err != nil {
			t.Errorf("the host could not start a process during the bomb: %v", err)
		}
		slowest = max(slowest, time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	o := run.Wait()
	peak := sampler.Stop()
	if slowest > 2*time.Second {
		t.Errorf("the host took %v to start /bin/true during the bomb", slowest)
	}
	if left := sandboxtest.Procs(marker); len(left) > 0 {
		t.Errorf("ATTACK SUCCEEDED: bomb processes %v survived the run", left)
	}
	if n := ns.Procs(); n > 0 {
		t.Errorf("ATTACK SUCCEEDED: %d processes left in the run's pid namespace", n)
	}
	t.Logf("status %s; at most %d processes seen at once from the host; host started /bin/true in at most %v", o.Result.Status, peak, slowest)
	return o, peak
}

// checkPeak allows a little over the budget: the host counts by walking
// /proc, which is not atomic, so a process that exits and one that starts
// during the walk may both be counted.
func checkPeak(t *testing.T, peak int64, budget int) {
	t.Helper()
	if peak > int64(budget)+8 {
		t.Errorf("ATTACK SUCCEEDED: the host saw %d processes in the run at once, budget %d", peak, budget)
	}
}

func hasDenial(r *sandbox.Result, kind string) bool {
	for _, d := range r.Denials {
		if d.Kind == kind {
			return true
		}
	}
	return false
}

// An 8 GiB allocation under a 256 MiB memory budget. As root the cgroup's
// OOM killer ends it (killed_oom); unprivileged the Report says the limit
// is degraded to RLIMIT_AS, and the allocation fails with MemoryError
// (failed). The control allocates 1 GiB, four times the budget, on the
// host (not 8 GiB: the host must stay unharmed). Host-side evidence: the
// most anonymous memory the host saw the probe hold.
func TestAttackMemoryBomb(t *testing.T) {
	const budget = 256 << 20
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Memory = budget })
	degraded := sb.Degraded(profile.ResourceLimits)
	const src = `
import sys, time
b = bytearray(int(sys.argv[1]))  # zero-filled: every page is touched
print("ALLOCATED", len(b), flush=True)
time.sleep(0.2)  # let the host's sampler see it
`
	marker := sandboxtest.Marker(t, "oom")
	probe := func(size int64) sandboxtest.Probe {
		return sandboxtest.Probe{Args: sandboxtest.Py(src, fmt.Sprint(size), marker), Timeout: 30 * time.Second}
	}
	c, peak := watchRSS(t, marker, func() sandboxtest.Outcome { return sb.Host(t, probe(1<<30)) })
	requireControl(t, c, "ALLOCATED")
	if peak < 1<<30 {
		t.Fatalf("positive control failed: the host saw the probe hold only %d bytes", peak)
	}

	o, peak := watchRSS(t, marker, func() sandboxtest.Outcome { return sb.Run(t, probe(8<<30)) })
	requireNotIn(t, o, "ALLOCATED")
	if peak > budget {
		t.Errorf("ATTACK SUCCEEDED: the host saw the probe hold %d bytes of anonymous memory, budget %d", peak, budget)
	}
	if left := sandboxtest.Procs(marker); len(left) > 0 {
		t.Errorf("the probe survived the run as host pids %v", left)
	}
	switch {
	case degraded:
		if o.Result.Status != sandbox.StatusFailed || !strings.Contains(o.Stderr, "MemoryError") {
			t.Errorf("resource-limits is degraded (%s): want status failed with a MemoryError\n%s", sb.Executor.Report().Status(profile.ResourceLimits).Mechanism, o)
		}
	default:
		if o.Result.Status != sandbox.StatusKilledOOM || !hasDenial(o.Result, "memory") {
			t.Errorf("want status killed_oom with a memory denial\n%s\ndenials: %+v", o, o.Result.Denials)
		}
	}
	t.Logf("status %s; most anonymous memory seen from the host %d MiB", o.Result.Status, peak>>20)
}

// watchRSS runs f while sampling the anonymous resident memory of the
// host process carrying marker, and returns the largest seen. Anonymous
// memory is what the budget charges; file pages of the interpreter may
// already be charged elsewhere, so the whole resident set may exceed it.
func watchRSS(t *testing.T, marker string, f func() sandboxtest.Outcome) (sandboxtest.Outcome, int64) {
	t.Helper()
	s := sandboxtest.Sample(2*time.Millisecond, func() int64 {
		var peak int64
		for _, pid := range sandboxtest.Procs(marker) {
			peak = max(peak, sandboxtest.AnonRSS(pid))
		}
		return peak
	})
	o := f()
	return o, s.Stop()
}

// TIOCSTI: pushing characters into a terminal's input queue, which a
// shell reading that terminal would then run. The host's own terminal
// given as stdin (the evidence: what waits in its input queue after the
// run), and a pty the probe opens itself (the evidence: the errno, which
// isolates the seccomp filter, since the probe makes that pty its
// controlling terminal).
func TestAttackTIOCSTI(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	if b, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); strings.TrimSpace(string(b)) == "0" && sandboxtest.Unprivileged() {
		t.Skip("this kernel refuses TIOCSTI to unprivileged users (dev.tty.legacy_tiocsti=0): there is nothing for the sandbox to block and no control is possible")
	}

	t.Run("host-terminal", func(t *testing.T) {
		_, slave := sandboxtest.OpenPTY(t)
		inject := sandboxtest.Marker(t, "typed")
		const src = `
import fcntl, sys, termios
try:
    for ch in sys.argv[1] + "\n":
        fcntl.ioctl(0, termios.TIOCSTI, ch.encode())
except OSError as e:
    print("TIOCSTI refused: errno=%d" % e.errno)
    sys.exit(1)
print("INJECTED")
`
		// The control makes the terminal its controlling terminal, as
		// the caller's shell would be; the sandbox starts a new session.
		cmd := exec.Command(sandboxtest.Python, "-c", src, inject)
		cmd.Stdin = slave
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "INJECTED") || !strings.Contains(sandboxtest.PendingInput(t, slave), inject) {
			t.Fatalf("positive control failed: TIOCSTI did not reach the host terminal (%v)\n%s", err, out)
		}
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(src, inject), Stdin: slave})
		if got := sandboxtest.PendingInput(t, slave); got != "" {
			t.Errorf("ATTACK SUCCEEDED: %q waits in the host terminal's input queue\n%s", got, o)
		}
		requireNotIn(t, o, "INJECTED")
	})

	t.Run("own-pty", func(t *testing.T) {
		const src = `
import fcntl, os, pty, sys, termios
pid, master = pty.fork()
if pid == 0:
    try:
        fcntl.ioctl(0, termios.TIOCSTI, b"x")
    except OSError as e:
        os._exit(e.errno)
    os._exit(0)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
print("INJECTED" if code == 0 else "TIOCSTI refused: errno=%d" % code)
sys.exit(0 if code == 0 else 1)
`
		p := sandboxtest.Probe{Args: sandboxtest.Py(src)}
		requireControl(t, sb.Host(t, p), "INJECTED")
		o := sb.Run(t, p)
		requireNotIn(t, o, "INJECTED")
		if !strings.Contains(o.Stdout, fmt.Sprintf("errno=%d\n", unix.EPERM)) {
			t.Errorf("TIOCSTI should fail with EPERM (the seccomp filter's answer)\n%s", o)
		}
	})
}

// Kernel interfaces the seccomp filter refuses: keyrings, bpf, io_uring.
// Each call is one the host kernel accepts from this user, or at least
// handles (an error that is not EPERM or ENOSYS: bad address, bad file
// descriptor, bad command); in the sandbox it must fail with EPERM.
func TestAttackKernelInterfaces(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	const src = `
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(256)
args = [ctypes.cast(buf, ctypes.c_void_p) if a == "buf" else ctypes.c_long(int(a)) for a in sys.argv[1:]]
r = libc.syscall(*args)
print("RESULT %d ERRNO %d" % (r, ctypes.get_errno() if r < 0 else 0))
`
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"keyctl", []string{fmt.Sprint(unix.SYS_KEYCTL), "0", "-3", "1"}}, // KEYCTL_GET_KEYRING_ID, session keyring, create
		{"add_key", []string{fmt.Sprint(unix.SYS_ADD_KEY), "0", "0", "0", "0", "0"}},
		{"request_key", []string{fmt.Sprint(unix.SYS_REQUEST_KEY), "0", "0", "0", "0"}},
		{"bpf", []string{fmt.Sprint(unix.SYS_BPF), "9999", "buf", "16"}}, // no such command
		{"io_uring_setup", []string{fmt.Sprint(unix.SYS_IO_URING_SETUP), "4", "buf"}},
		{"io_uring_enter", []string{fmt.Sprint(unix.SYS_IO_URING_ENTER), "-1", "0", "0", "0", "0", "0"}},
		{"io_uring_register", []string{fmt.Sprint(unix.SYS_IO_URING_REGISTER), "-1", "0", "0", "0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := sandboxtest.Probe{Args: sandboxtest.Py(src, tc.args...)}
			c := sb.Host(t, p)
			requireControl(t, c, "RESULT")
			if errno := lineAfter(c.Stdout, "RESULT "); strings.HasSuffix(errno, fmt.Sprintf(" ERRNO %d", unix.EPERM)) || strings.HasSuffix(errno, fmt.Sprintf(" ERRNO %d", unix.ENOSYS)) {
				t.Fatalf("positive control failed: the host kernel does not handle %s for this user\n%s", tc.name, c)
			}
			o := sb.Run(t, p)
			if !strings.Contains(o.Stdout, fmt.Sprintf("ERRNO %d\n", unix.EPERM)) {
				t.Errorf("ATTACK SUCCEEDED: %s was not refused with EPERM\n%s", tc.name, o)
			}
		})
	}
}

// Moving out of the run's cgroup: writing its own pid into cgroup.procs
// of the cgroups the run's cgroup was made under (the test's own). As
// root the control does that (a no-op move: it is already there), and the
// host checks that the sandboxed probe is still in the run's cgroup after
// trying. Unprivileged there is no run cgroup (the Report says
// resource-limits is degraded); the control then only sees the cgroup
// files, which the sandbox must not.
func TestAttackCgroupEscape(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	dirs := sandboxtest.OwnCgroupDirs(t)
	if len(dirs) == 0 {
		t.Fatal("this process is in no memory, pids or cpu cgroup")
	}
	marker := sandboxtest.Marker(t, "cgroup")
	done := filepath.Join(sb.Workspace, "attempted")
	const script = `m=$1 done=$2; shift 2
for d; do
  test -e "$d/cgroup.procs" && echo "CGROUP-SEEN $d"
  echo $$ > "$d/cgroup.procs" && echo "MOVED $d"
done
touch "$done"; sleep 5`
	p := sandboxtest.Probe{Args: sandboxtest.Sh(script, append([]string{marker, done}, dirs...)...)}
	degraded := sb.Degraded(profile.ResourceLimits)

	c := sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(strings.Replace(script, "sleep 5", "", 1), append([]string{marker, filepath.Join(t.TempDir(), "attempted")}, dirs...)...)})
	want := "MOVED"
	if degraded {
		want = "CGROUP-SEEN"
	}
	requireControl(t, c, want)

	run := sb.Start(t, p)
	var inRun string
	deadline := time.Now().Add(5 * time.Second)
	for !sandboxtest.Exists(done) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if pid := sandboxtest.WaitFor(marker, time.Second); pid != 0 {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		inRun = string(b)
	}
	if err := run.Kill(); err != nil {
		t.Fatal(err)
	}
	o := run.Wait()
	requireNotIn(t, o, "CGROUP-SEEN", "MOVED")
	if left := sandboxtest.Procs(marker); len(left) > 0 {
		t.Errorf("the probe survived the run as host pids %v", left)
	}
	if degraded {
		t.Logf("no run cgroup to escape from (%s); the sandbox saw no cgroup file", sb.Executor.Report().Status(profile.ResourceLimits).Reason)
		return
	}
	if inRun == "" {
		t.Fatal("could not read the sandboxed probe's cgroups from the host")
	}
	// The run's cgroup is on the unified hierarchy when that has the
	// controllers (v2), else on the memory and pids v1 hierarchies.
	_, v2 := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(inRun), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls := "," + parts[1] + ","
		if v2 == nil && parts[1] == "" || v2 != nil && (strings.Contains(ctrls, ",memory,") || strings.Contains(ctrls, ",pids,")) {
			checked++
			if !strings.Contains(parts[2], "/airlock-") {
				t.Errorf("ATTACK SUCCEEDED: after trying to move, the sandboxed probe is in %q, outside the run's cgroup", line)
			}
		}
	}
	if checked == 0 {
		t.Errorf("found none of the run's cgroups in the probe's /proc/PID/cgroup:\n%s", inRun)
	}
}

// The caller's secrets in its environment must not reach the command.
func TestAttackEnvironmentSecret(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	var secrets []string
	for _, name := range []string{"AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "ANTHROPIC_API_KEY", "SSH_AUTH_SOCK"} {
		v := sandboxtest.Marker(t, "env")
		t.Setenv(name, v)
		secrets = append(secrets, v)
	}
	// /proc/self/environ is the environment execve gave, whatever the
	// shell's env shows.
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`env; tr '\0' '\n' < /proc/self/environ`)}
	c := sb.Host(t, p)
	for _, s := range secrets {
		if !strings.Contains(c.Stdout, s) {
			t.Fatalf("positive control failed: %s is not in the host run's environment", s)
		}
	}
	requireNotIn(t, sb.Run(t, p), secrets...)
}
