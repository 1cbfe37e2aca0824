package sandbox

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On amd64 the helper is cloned by the spawner (linux.SpawnHelper), not
// by a full fork of this process, and is still this process's own child:
// waitable through its pidfd, its parent this process.
func TestHelperBySpawner(t *testing.T) {
	h, err := newHelper(helperSpec{flags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS})
	if err != nil {
		t.Fatal(err)
	}
	pid := h.cmd.Process.Pid
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 2 || f[1] != strconv.Itoa(os.Getpid()) {
		t.Errorf("the helper's parent is %v, want this process %d", f, os.Getpid())
	}
	if want := runtime.GOARCH == "amd64"; h.cmd.spawned != want {
		t.Errorf("spawned by the spawner: %v, want %v", h.cmd.spawned, want)
	}
	h.discard()
	if h.cmd.ProcessState == nil || h.cmd.ProcessState.Pid() != pid {
		t.Errorf("discard did not wait for helper %d: %v", pid, h.cmd.ProcessState)
	}
	if err := unix.Kill(pid, 0); err != unix.ESRCH {
		t.Errorf("helper %d after discard: kill 0 = %v, want ESRCH", pid, err)
	}
}
