package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// warmHelpers lists this process's stage-2 helpers: its children whose
// argv[0] names the helper.
func warmHelpers(t *testing.T) []int {
	t.Helper()
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, ppid follows
		// the last ')'.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		dir := filepath.Dir(st)
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		if strings.TrimRight(string(cmdline), "\x00") == "airlock-stage2" {
			pid, _ := strconv.Atoi(filepath.Base(dir))
			out = append(out, pid)
		}
	}
	return out
}

// helperStartedBefore runs a command that reads the start time of the
// sandbox's PID 1 (the helper) and reports whether the helper started
// more than margin before Start was called.
func helperStartedBefore(t *testing.T, ex *sandbox.Executor, margin time.Duration) bool {
	t.Helper()
	proc, err := ex.Prepare(context.Background(), sandbox.Cmd{Args: []string{"cat", "/proc/1/stat"}})
	if err != nil {
		t.Fatal(err)
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	res, err := proc.Wait()
	if err != nil || res.Status != sandbox.StatusSucceeded {
		t.Fatalf("cat /proc/1/stat: %v %s %q", err, res.Status, res.Stderr)
	}
	f := strings.Fields(string(res.Stdout[strings.LastIndexByte(string(res.Stdout), ')')+1:]))
	// starttime, field 22 of stat, in clock ticks since boot (USER_HZ,
	// 100 on Linux); f[0] is field 3.
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		t.Fatalf("stat %q: %v", res.Stdout, err)
	}
	started := time.Duration(ticks) * 10 * time.Millisecond
	return started < time.Duration(ts.Nano())-margin
}

// workspaceExecutor is an Executor of the workspace preset on a
// workspace of its own, with opts, closed when t ends.
func workspaceExecutor(t *testing.T, opts sandbox.Options) *sandbox.Executor {
	t.Helper()
	s := profile.Preset("workspace")
	s.Workspace = t.TempDir()
	p, err := profile.New(s)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sandbox.NewWithOptions(p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	return ex
}

// TestWarmHelperReused: an Executor with KeepWarm runs each command in a
// helper cloned before the run's Start (after the run before it), and
// one without it clones the second run's own. The helper's start time is
// the kernel's, read from inside the sandbox.
func TestWarmHelperReused(t *testing.T) {
	for _, keepWarm := range []bool{true, false} {
		t.Run(fmt.Sprintf("KeepWarm=%v", keepWarm), func(t *testing.T) {
			ex := workspaceExecutor(t, sandbox.Options{KeepWarm: keepWarm})
			for i := range 3 {
				// Far more than the clock's tick between the clone and Start.
				time.Sleep(300 * time.Millisecond)
				warm := helperStartedBefore(t, ex, 150*time.Millisecond)
				if want := i == 0 || keepWarm; warm != want {
					t.Errorf("run %d: helper cloned before Start = %v, want %v", i, warm, want)
				}
			}
		})
	}
}

// TestWarmHelperNothingLeftBehind: the helper New warms, never used, is
// there (a child of this process, in a cgroup of this supervisor) until
// Close, and Close leaves neither.
func TestWarmHelperNothingLeftBehind(t *testing.T) {
	before := airlockCgroups(t)
	mine := fmt.Sprintf("airlock-%d-", os.Getpid())
	cgroups := func() (n int) {
		for dir := range airlockCgroups(t) {
			if !before[dir] && strings.HasPrefix(filepath.Base(dir), mine) {
				n++
			}
		}
		return n
	}
	had := len(warmHelpers(t))
	ex, _ := newExecutor(t, nil)
	var found []int
	for start := time.Now(); len(found) <= had && time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
		found = warmHelpers(t)
	}
	// Positive control: the scans find the warm helper and its cgroup.
	if len(found) <= had {
		t.Fatal("positive control: no warm helper found among this process's children")
	}
	writable := sandbox.ProbeHost().CgroupWritable
	if writable && cgroups() == 0 {
		t.Fatal("positive control: the warm helper's cgroup was not found")
	}
	if err := ex.Close(); err != nil {
		t.Fatal(err)
	}
	if left := warmHelpers(t); len(left) > had {
		t.Errorf("warm helper left after Close: %v", left)
	}
	if n := cgroups(); n > 0 {
		t.Errorf("%d cgroup(s) of the warm helper left after Close", n)
	}
	// A run after Close clones its own helper and works.
	if res := run(t, ex, "true"); res.Status != sandbox.StatusSucceeded {
		t.Errorf("run after Close: %s %q", res.Status, res.Stderr)
	}
}

// TestColdExecutorClonesNothing: an Executor made with Options.Cold
// (airlock doctor's) has no warm helper, and its first run still works
// with a helper of its own. The control is the default Executor, whose
// warm helper the same scan finds.
func TestColdExecutorClonesNothing(t *testing.T) {
	for _, cold := range []bool{false, true} {
		t.Run(fmt.Sprintf("Cold=%v", cold), func(t *testing.T) {
			had := len(warmHelpers(t))
			ex := workspaceExecutor(t, sandbox.Options{Cold: cold})
			var found []int
			// The clone runs in the background: give it far longer than
			// it takes before saying there is none.
			for start := time.Now(); len(found) <= had && time.Since(start) < 2*time.Second; time.Sleep(5 * time.Millisecond) {
				found = warmHelpers(t)
			}
			if warm := len(found) > had; warm == cold {
				t.Errorf("warm helpers: had %d, found %v; want one only without Cold", had, found)
			}
			if res := run(t, ex, "true"); res.Status != sandbox.StatusSucceeded {
				t.Errorf("run: %s %q", res.Status, res.Stderr)
			}
		})
	}
}

// TestAttackWarmHelperStaleMount: a filesystem the host unmounts after
// the warm helper's clone must not be in the run's view. The helper's
// mount namespace is a copy made at the clone, and a private mount's
// unmount does not propagate into it: the Executor must see that the
// mount table changed and clone a fresh helper.
func TestAttackWarmHelperStaleMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting on the host needs root")
	}
	ex, ws := newExecutor(t, nil)
	// The Executor's helper was cloned before this mount: remove it so
	// the next is cloned with the mount in place.
	ex.Close()
	dir := filepath.Join(ws, "volume")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	mounted := true
	defer func() {
		if mounted {
			_ = unix.Unmount(dir, unix.MNT_DETACH)
		}
	}()
	if err := unix.Mount("", dir, "", unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("unmounted-secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := ex.Profile()
	ex2, err := sandbox.New(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ex2.Close()
	// Positive control: while mounted, the sandbox sees the file.
	ctl, err := sandbox.New(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	if res := run(t, ctl, "cat volume/secret"); !strings.Contains(string(res.Stdout), "unmounted-secret") {
		t.Fatalf("positive control: the mounted file is not visible in the sandbox: %s %q %q", res.Status, res.Stdout, res.Stderr)
	}
	// ex2's warm helper is cloned (the clone is waited for by a run, so
	// let it finish first), then the host unmounts.
	for start := time.Now(); len(warmHelpers(t)) == 0 && time.Since(start) < 10*time.Second; time.Sleep(5 * time.Millisecond) {
	}
	time.Sleep(100 * time.Millisecond)
	if err := unix.Unmount(dir, 0); err != nil {
		t.Fatal(err)
	}
	mounted = false
	res := run(t, ex2, "cat volume/secret")
	if strings.Contains(string(res.Stdout), "unmounted-secret") {
		t.Errorf("a filesystem unmounted on the host after the warm helper's clone is in the sandbox: %q", res.Stdout)
	}
}
