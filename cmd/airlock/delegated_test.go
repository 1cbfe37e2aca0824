package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// delegateCgroup makes, as root, a cgroup delegated to uid 65534 (the
// directory and its cgroup.procs, tasks and, on v2, subtree_control
// chowned, the controllers enabled for its children) with a leaf "client"
// that stays root's, as systemd leaves a user's session scope below a
// delegated user@UID.service. It returns the client directories, one per
// hierarchy, which a process joins by writing its pid to cgroup.procs.
func delegateCgroup(t *testing.T) []string {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs("/sys/fs/cgroup", &st); err != nil {
		t.Skipf("no cgroup filesystem: %v", err)
	}
	name := fmt.Sprintf("airlock-test-delegated-%d", os.Getpid())
	var parents []string
	if st.Type == unix.CGROUP2_SUPER_MAGIC {
		parents = []string{filepath.Join("/sys/fs/cgroup", name)}
	} else {
		for _, c := range []string{"memory", "pids", "cpu"} {
			parents = append(parents, filepath.Join("/sys/fs/cgroup", c, name))
		}
	}
	var clients []string
	for _, d := range parents {
		client := filepath.Join(d, "client")
		if err := os.MkdirAll(client, 0o755); err != nil {
			t.Skipf("cannot make a cgroup to delegate: %v", err)
		}
		t.Cleanup(func() { unix.Rmdir(client); unix.Rmdir(d) })
		if st.Type == unix.CGROUP2_SUPER_MAGIC {
			if err := os.WriteFile(filepath.Join(d, "cgroup.subtree_control"), []byte("+memory +pids +cpu"), 0); err != nil {
				t.Skipf("cannot enable controllers for the delegated cgroup: %v", err)
			}
		}
		for _, f := range []string{"", "cgroup.procs", "tasks", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(d, f), 65534, 65534); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
		}
		clients = append(clients, client)
	}
	return clients
}

// TestRunDelegatedCgroupUnprivileged: uid 65534 in a leaf cgroup it
// cannot write, below a cgroup delegated to it, gets a real memory limit
// (a 300MiB allocation under --memory 64MiB is killed: exit 137,
// killed_oom) made in the delegated cgroup, and no address-space warning.
// The control, the same user without the delegation, gets only RLIMIT_AS:
// the allocation succeeds, and stderr and the Report say so.
func TestRunDelegatedCgroupUnprivileged(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	ws, argv := unprivilegedCommand(t, bin)
	run := func(wrapper []string, args ...string) (int, string, string) {
		cmd := exec.Command(wrapper[0], append(wrapper[1:], argv(args...)...)...)
		cmd.Dir = ws
		return runCmd(t, cmd)
	}
	alloc := "b = bytearray(300 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('allocated')\n"
	args := []string{"run", "--workspace", ws, "--memory", "64MiB", "--report", "-", "--", "python3", "-c", alloc}

	code, out, errOut := run([]string{"setpriv"}, args...)
	if strings.Contains(out, `"status": "killed_oom"`) {
		t.Skip("uid 65534 has a writable cgroup here without delegation: the control would prove nothing")
	}
	if code != 0 || !strings.Contains(out, "allocated") || !strings.Contains(errOut, "only an address-space limit") ||
		!strings.Contains(out, "only an address-space limit") {
		t.Fatalf("control without delegation: exit %d, want the allocation to succeed under RLIMIT_AS with the warning; stderr %q\n%.600s", code, errOut, out)
	}

	clients := delegateCgroup(t)
	// The wrapper joins the leaf as root, then drops to uid 65534 and
	// runs the same command line (run's setpriv argv, after "setpriv").
	join := ""
	for _, c := range clients {
		join += fmt.Sprintf("echo $$ > %s/cgroup.procs || exit 99; ", c)
	}
	code, out, errOut = run([]string{"sh", "-c", join + `exec setpriv "$@"`, "join"}, args...)
	if code != 137 || !strings.Contains(out, `"status": "killed_oom"`) || strings.Contains(out, "allocated") {
		t.Errorf("delegated cgroup: exit %d, want 137 and killed_oom; stderr %q\n%.800s", code, errOut, out)
	}
	if strings.Contains(errOut, "address-space") || !strings.Contains(out, "in the delegated cgroup") {
		t.Errorf("delegated cgroup: want no address-space warning and the Report naming the delegated cgroup; stderr %q\n%.1500s", errOut, out)
	}
}
