package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// scratchFill writes up to sys.argv[1] bytes into a file in each of the
// sandbox's private HOME, /tmp and /dev/shm, keeping every file, and
// says how far each got; then it waits so the host can look.
const scratchFill = `
import os, sys, time
limit = int(sys.argv[1])
chunk = b"x" * (1 << 20)
total = 0
for d in (os.environ["HOME"], "/tmp", "/dev/shm"):
    n = 0
    fd = os.open(os.path.join(d, "fill"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        while n < limit:
            n += os.write(fd, chunk)
    except OSError as e:
        print("STOPPED", d, e.strerror, flush=True)
    total += n
    print("WROTE", d, n, flush=True)
print("TOTAL", total, flush=True)
time.sleep(1)
`

// TestAttackScratchFill: the private HOME, /tmp and /dev/shm are
// tmpfs, which is memory. Under a 256 MiB memory budget the probe tries
// to keep 1 GiB in each. Host-side evidence: what the tmpfs mounts of
// the running probe hold, read through /proc/PID/root (statfs, each
// filesystem once), sampled while it runs. The positive control is the
// same probe under a 1 GiB budget, which must hold well over 256 MiB.
func TestAttackScratchFill(t *testing.T) {
	const budget = 256 << 20
	marker := sandboxtest.Marker(t, "scratch")
	probe := func(limit int64) sandboxtest.Probe {
		return sandboxtest.Probe{Args: sandboxtest.Py(scratchFill, fmt.Sprint(limit), marker), Timeout: 60 * time.Second}
	}
	run := func(memory int64, limit int64) (sandboxtest.Outcome, int64) {
		sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Memory = profile.Size(memory) })
		s := sandboxtest.Sample(5*time.Millisecond, func() int64 { return scratchHeld(marker) })
		o := sb.Run(t, probe(limit))
		return o, s.Stop()
	}

	c, held := run(1<<30, 200<<20)
	if !strings.Contains(c.Output(), "TOTAL") || held < 2*budget {
		t.Fatalf("positive control failed: under a 1 GiB budget the host saw the probe's tmpfs hold only %d MiB (want over %d MiB)\n%s", held>>20, 2*budget>>20, c)
	}
	t.Logf("control: 1 GiB budget, the host saw %d MiB held", held>>20)

	o, held := run(budget, 1<<30)
	if held > budget+(1<<20) {
		t.Errorf("ATTACK SUCCEEDED: under a %d MiB memory budget the host saw the probe's tmpfs hold %d MiB\n%s", budget>>20, held>>20, o)
	}
	if total := lineAfter(o.Output(), "TOTAL "); total != "" {
		if n, _ := strconv.ParseInt(total, 10, 64); n > budget+(1<<20) {
			t.Errorf("ATTACK SUCCEEDED: the probe wrote %d MiB into its tmpfs under a %d MiB budget\n%s", n>>20, budget>>20, o)
		}
	}
	if held == 0 {
		t.Fatalf("the host never saw the probe's tmpfs: the evidence is missing\n%s", o)
	}
	// Either the tmpfs was full (ENOSPC) or, with a memory cgroup that
	// charges its pages, the OOM killer ended the probe.
	if !strings.Contains(o.Output(), "No space left") && o.Result.Status != sandbox.StatusKilledOOM {
		t.Errorf("want ENOSPC in the probe's output or status killed_oom\n%s", o)
	}
	t.Logf("attack: status %s, the host saw %d MiB held", o.Result.Status, held>>20)
}

// scratchHeld is what the tmpfs mounts at HOME, /tmp and /dev/shm of
// the processes carrying marker hold, each filesystem counted once.
func scratchHeld(marker string) int64 {
	var most int64
	for _, pid := range sandboxtest.Procs(marker) {
		root := "/proc/" + strconv.Itoa(pid) + "/root"
		home := ""
		if env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ"); err == nil {
			for _, kv := range strings.Split(string(env), "\x00") {
				if v, ok := strings.CutPrefix(kv, "HOME="); ok {
					home = v
				}
			}
		}
		seen := map[[2]int32]bool{}
		var sum int64
		for _, d := range []string{home, "/tmp", "/dev/shm"} {
			var st unix.Statfs_t
			if d == "" || unix.Statfs(root+d, &st) != nil || st.Type != unix.TMPFS_MAGIC || seen[st.Fsid.Val] {
				continue
			}
			seen[st.Fsid.Val] = true
			sum += int64(st.Blocks-st.Bfree) * st.Bsize
		}
		most = max(most, sum)
	}
	return most
}

// inodeFill creates up to sys.argv[1] empty files in /tmp, then waits
// so the host can look.
const inodeFill = `
import os, sys, time
n = 0
try:
    for i in range(int(sys.argv[1])):
        os.close(os.open("/tmp/f%d" % i, os.O_WRONLY | os.O_CREAT, 0o600))
        n += 1
except OSError as e:
    print("STOPPED", e.strerror, flush=True)
print("CREATED", n, flush=True)
time.sleep(1)
`

// TestAttackScratchInodes: empty files cost no tmpfs blocks but an
// inode each, kernel memory the size bound does not count. Under a
// 64 MiB memory budget the scratch tmpfs has 8192 inodes; the probe
// tries 100000 files. Host-side evidence: the inodes in use on the
// probe's /tmp (statfs through /proc/PID/root). Control: the same probe
// under a 1 GiB budget creates 20000.
func TestAttackScratchInodes(t *testing.T) {
	marker := sandboxtest.Marker(t, "inodes")
	run := func(memory, files int64) (sandboxtest.Outcome, int64) {
		sb, _ := attackTarget(t, func(s *profile.Spec) { s.Budgets.Memory = profile.Size(memory) })
		s := sandboxtest.Sample(5*time.Millisecond, func() int64 {
			var most int64
			for _, pid := range sandboxtest.Procs(marker) {
				var st unix.Statfs_t
				if unix.Statfs("/proc/"+strconv.Itoa(pid)+"/root/tmp", &st) == nil && st.Type == unix.TMPFS_MAGIC {
					most = max(most, int64(st.Files-st.Ffree))
				}
			}
			return most
		})
		// Each O_CREAT is a round trip through the create guard
		// (createguard.go): 20000 of them take tens of seconds on a
		// loaded two-core machine.
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(inodeFill, fmt.Sprint(files), marker), Timeout: 4 * time.Minute})
		return o, s.Stop()
	}
	c, used := run(1<<30, 20000)
	if lineAfter(c.Output(), "CREATED ") != "20000" || used < 20000 {
		t.Fatalf("positive control failed: the host saw %d inodes in use\n%s", used, c)
	}
	o, used := run(64<<20, 100000)
	if used == 0 || used > 8192 {
		t.Errorf("ATTACK SUCCEEDED (or no evidence): the host saw %d inodes in use on the probe's /tmp, bound 8192\n%s", used, o)
	}
	// With a memory cgroup, which also charges the inodes, the OOM
	// killer may end the probe first.
	if !strings.Contains(o.Output(), "No space left") && o.Result.Status != sandbox.StatusKilledOOM {
		t.Errorf("want ENOSPC in the probe's output or status killed_oom\n%s", o)
	}
	t.Logf("control %s; attack: %d inodes in use, %s", lineAfter(c.Output(), "CREATED "), used, lineAfter(o.Output(), "CREATED "))
}

// workspaceFill writes sys.argv[1] files of 1 MiB each into the working
// directory (the workspace), or into a directory that only its owner
// can list with "hidden", or one file of that many MiB with "one".
const workspaceFill = `
import os, sys
n = int(sys.argv[1])
chunk = b"x" * (1 << 20)
wrote = 0
try:
    if sys.argv[2] == "one":
        fd = os.open("big", os.O_WRONLY | os.O_CREAT, 0o600)
        for i in range(n):
            wrote += os.write(fd, chunk)
    else:
        d = "."
        if sys.argv[2] == "hidden":  # a directory the supervisor cannot list
            d = "h"
            os.mkdir(d, 0o300)
        for i in range(n):
            fd = os.open("%s/fill%d" % (d, i), os.O_WRONLY | os.O_CREAT, 0o600)
            wrote += os.write(fd, chunk)
            os.close(fd)
except OSError as e:
    print("STOPPED", e.strerror, flush=True)
print("WROTE", wrote, flush=True)
`

// TestAttackWriteFill: the workspace is on the host's disk, which a
// command could fill. Under a 128 MiB write budget the probe writes
// twice that in 1 MiB files (in the workspace, then in a directory its
// owner cannot list, which an unprivileged supervisor's walk cannot see
// into), then one 256 MiB file. Host-side evidence:
// the blocks the workspace holds after the run. The positive control is
// the same probe under a 1 GiB budget, which writes it all.
func TestAttackWriteFill(t *testing.T) {
	const budget = 128 << 20
	const slack = 48 << 20 // what one check and one walk may let through
	run := func(t *testing.T, maxWrite int64, how string) (sandboxtest.Outcome, int64) {
		// The budget counts the filesystem's loss of free space, which
		// space freed meanwhile offsets (another package's tests
		// removing their directories, the journal committing the
		// earlier subtests' deletions): the run gets a filesystem of its
		// own, so that it is measured against its own writes only.
		sb := sandboxtest.New(t, preset, sandboxtest.OwnFilesystemWorkspace(t), func(s *profile.Spec) { s.Budgets.MaxWrite = profile.Size(maxWrite) })
		if st := sb.Executor.Report().Status(profile.ResourceLimits); st.Status != sandbox.Enforced && st.Status != sandbox.Degraded {
			t.Fatalf("resource-limits is %s with a write budget", st.Status)
		}
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(workspaceFill, fmt.Sprint(2*budget>>20), how), Timeout: 60 * time.Second})
		return o, diskUse(t, sb.Workspace)
	}
	for _, how := range []string{"many", "hidden", "one"} {
		t.Run(how, func(t *testing.T) {
			c, held := run(t, 1<<30, how)
			if c.Result.Status != sandbox.StatusSucceeded || held < 2*budget {
				t.Fatalf("positive control failed: under a 1 GiB write budget the workspace holds %d MiB (want %d)\n%s", held>>20, 2*budget>>20, c)
			}
			o, held := run(t, budget, how)
			if held > budget+slack {
				t.Errorf("ATTACK SUCCEEDED: under a %d MiB write budget the workspace holds %d MiB\n%s", budget>>20, held>>20, o)
			}
			switch how {
			case "many", "hidden":
				if o.Result.Status != sandbox.StatusLimitExceeded || !hasDenial(o.Result, "write") {
					t.Errorf("want status limit_exceeded with a write denial\n%s\ndenials %+v", o, o.Result.Denials)
				}
			case "one":
				// RLIMIT_FSIZE: the write past the budget fails (EFBIG,
				// the probe is PID 1, which SIGXFSZ does not end).
				if !strings.Contains(o.Output(), "File too large") || held < budget || !hasDenial(o.Result, "write") {
					t.Errorf("want the file cut at the budget with EFBIG; the workspace holds %d MiB\n%s", held>>20, o)
				}
			}
			t.Logf("control held %d MiB; attack: status %s, the workspace holds %d MiB, growth %v", 2*budget>>20, o.Result.Status, held>>20, o.Result.Limits["write_growth_bytes"])
		})
	}
}

// diskUse is what dir holds on disk: allocated blocks, each inode once.
// Directories the probe made unlistable are opened up first (the test
// owns them).
func diskUse(t *testing.T, dir string) int64 {
	t.Helper()
	seen := map[[2]uint64]bool{}
	var n int64
	var visit func(path string)
	visit = func(path string) {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatalf("disk use: %v", err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if k := [2]uint64{st.Dev, st.Ino}; !seen[k] {
			seen[k] = true
			n += st.Blocks * 512
		}
		if !fi.IsDir() {
			return
		}
		if fi.Mode().Perm()&0o500 != 0o500 {
			if err := os.Chmod(path, 0o700); err != nil {
				t.Fatalf("disk use: %v", err)
			}
		}
		names, err := os.ReadDir(path)
		if err != nil {
			t.Fatalf("disk use: %v", err)
		}
		for _, e := range names {
			visit(filepath.Join(path, e.Name()))
		}
	}
	visit(dir)
	return n
}
