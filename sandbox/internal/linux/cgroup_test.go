package linux

import (
	"fmt"
	"os"
	"os/exec"
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
