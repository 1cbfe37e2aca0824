package linux

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Destroy removes an empty cgroup at once and, when a process is still
// in it, kills that process first: the kernel refuses to remove a busy
// cgroup, so the fast path cannot leave one behind.
func TestCgroupDestroy(t *testing.T) {
	l := ProbeCgroups()
	if !l.Writable {
		t.Skip(l.Reason)
	}
	for _, busy := range []bool{false, true} {
		t.Run(fmt.Sprintf("busy=%v", busy), func(t *testing.T) {
			cg, err := NewCgroup(l, fmt.Sprintf("airlock-test-%d-%v", os.Getpid(), busy), Limits{Pids: 16})
			if err != nil {
				t.Fatal(err)
			}
			var sleeper *exec.Cmd
			if busy {
				sleeper = exec.Command("sleep", "60")
				if err := sleeper.Start(); err != nil {
					t.Fatal(err)
				}
				if err := cg.Add(sleeper.Process.Pid); err != nil {
					sleeper.Process.Kill()
					t.Fatal(err)
				}
			}
			if err := cg.Destroy(); err != nil {
				t.Fatal(err)
			}
			for _, d := range cg.dirs {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("%s is left behind (stat: %v)", d, err)
				}
			}
			if sleeper == nil {
				return
			}
			done := make(chan error, 1)
			go func() { done <- sleeper.Wait() }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				sleeper.Process.Kill()
				t.Fatal("the process in the cgroup survived Destroy")
			}
		})
	}
}

// A run's cgroup has a cpu hierarchy only with a cpu budget (on v1 each
// hierarchy is a directory to make, join and remove), and the counters
// read at the end (pids refused, peak memory) are those the kernel kept
// for the processes in it.
func TestCgroupHierarchiesAndCounters(t *testing.T) {
	l := ProbeCgroups()
	if !l.Writable {
		t.Skip(l.Reason)
	}
	for _, cpu := range []float64{0, 0.5} {
		t.Run(fmt.Sprintf("cpu=%v", cpu), func(t *testing.T) {
			cg, err := NewCgroup(l, fmt.Sprintf("airlock-test-%d-counters-%v", os.Getpid(), cpu), Limits{Pids: 1, CPU: cpu})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := cg.Destroy(); err != nil {
					t.Error(err)
				}
			}()
			cpuDir, hasCPU := cg.by["cpu"]
			if hasCPU != (cpu > 0) {
				t.Errorf("cpu hierarchy present = %v with a cpu budget of %v", hasCPU, cpu)
			}
			if l.Mode == "v1" {
				want := 2
				if cpu > 0 {
					want = 3
				}
				if len(cg.dirs) != want {
					t.Errorf("v1 run cgroup has %d directories %v, want %d", len(cg.dirs), cg.dirs, want)
				}
			}
			if hasCPU {
				file, want := "cpu.cfs_quota_us", "50000"
				if l.Mode == "v2" {
					file, want = "cpu.max", "50000 100000"
				}
				b, err := os.ReadFile(cpuDir + "/" + file)
				if err != nil || strings.TrimSpace(string(b)) != want {
					t.Errorf("%s/%s = %q (%v), want %q", cpuDir, file, b, err, want)
				}
			}
			// A shell in the cgroup (pids.max 1: itself) tries to fork.
			sh := exec.Command("sh", "-c", "read x; /bin/true; echo forked=$?")
			in, err := sh.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			sh.Stdout, sh.Stderr = &out, &out
			if err := sh.Start(); err != nil {
				t.Fatal(err)
			}
			if err := cg.Add(sh.Process.Pid); err != nil {
				sh.Process.Kill()
				sh.Wait()
				t.Fatal(err)
			}
			in.Write([]byte("go\n"))
			in.Close()
			sh.Wait()
			if strings.Contains(out.String(), "forked=0") {
				t.Fatalf("the fork in a cgroup with pids.max 1 succeeded: %s", out.String())
			}
			if n := cg.PidsLimitHits(); n < 1 {
				t.Errorf("PidsLimitHits = %d after a refused fork (%s)", n, out.String())
			}
			if n := cg.PeakMemory(); n <= 0 {
				t.Errorf("PeakMemory = %d after a shell ran in the cgroup", n)
			}
			if n := cg.OOMKills(); n != 0 {
				t.Errorf("OOMKills = %d with no memory limit", n)
			}
		})
	}
}
