package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// TestKilledRunPlaceholdersAnyUser: a supervisor killed outright leaves
// its placeholders (empty, marked) in the workspace. The next run there
// removes them whoever runs it: as root here, the next run is uid 65534
// with a state directory of its own, which holds no journal of the
// killed run; unprivileged, the next run has another state directory.
// Under the create guard a run makes no placeholder, so the killed run
// leaves none; the test then puts there what a killed run without the
// guard leaves, and the next run, under the guard, removes it.
func TestKilledRunPlaceholdersAnyUser(t *testing.T) {
	guarded := sandbox.ProbeHost().CreateGuard
	bin := buildAirlock(t)
	// Every directory the other user needs is under one it can search.
	root, err := os.MkdirTemp("", "airlock-placeholders-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	must(t, os.Chmod(root, 0o755))
	ws, home, otherHome := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "other")
	for _, d := range []string{ws, home, otherHome} {
		must(t, os.Mkdir(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(ws, "file"), []byte("x\n"), 0o644))
	shared := filepath.Join(root, "airlock")
	data, err := os.ReadFile(bin)
	must(t, err)
	must(t, os.WriteFile(shared, data, 0o755))
	before := dirNames(t, ws)

	cmd := exec.Command(shared, "run", "--workspace", ws, "--", "sh", "-c", `touch ready; sleep 60`)
	cmd.Env = cliEnv(home)
	must(t, cmd.Start())
	waitFile(t, filepath.Join(ws, "ready"))
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	os.Remove(filepath.Join(ws, "ready"))
	// Host side: the killed run's placeholders are there, empty (with
	// the guard: none was made; make what a run without it leaves).
	for _, name := range []string{".git", ".claude", ".vscode", ".envrc", ".bashrc"} {
		path := filepath.Join(ws, name)
		if !guarded {
			break
		}
		if _, err := os.Lstat(path); err == nil {
			t.Fatalf("a run under the create guard left %s", name)
		}
		if name == ".git" {
			must(t, syscall.Mknod(path, syscall.S_IFSOCK|0o1644, 0))
		} else {
			must(t, os.Mkdir(path, 0o755))
		}
		must(t, os.Chmod(path, os.ModeSticky|0o755))
	}
	left := 0
	for _, name := range []string{".git", ".claude", ".vscode", ".envrc", ".bashrc"} {
		fi, err := os.Lstat(filepath.Join(ws, name))
		if err != nil {
			t.Fatalf("%s of the killed run is not there: nothing to test (%v)", name, err)
		}
		if fi.IsDir() {
			if entries, _ := os.ReadDir(filepath.Join(ws, name)); len(entries) > 0 {
				t.Errorf("placeholder %s holds %v", name, entries)
			}
		}
		left++
	}

	// The workspace passes to the other user, the root-owned
	// placeholders in it stay.
	asOther := func(cmd *exec.Cmd) {}
	if os.Geteuid() == 0 {
		for _, d := range []string{ws, otherHome, filepath.Join(ws, "file")} {
			must(t, os.Chown(d, sandboxtest.NobodyUID, sandboxtest.NobodyUID))
		}
		must(t, os.Chmod(otherHome, 0o700))
		asOther = func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: sandboxtest.NobodyUID, Gid: sandboxtest.NobodyUID}}
		}
	}
	next := exec.Command(shared, "run", "--workspace", ws, "--", "sh", "-c", `cat file`)
	next.Env = cliEnv(otherHome)
	asOther(next)
	code, out, errOut := runCmd(t, next)
	if code != 0 || out != "x\n" {
		t.Fatalf("the next run by another user: exit %d, %q %s", code, out, errOut)
	}
	if after := dirNames(t, ws); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("workspace after another user's run %v, before the killed run %v (%d placeholders of the killed run)\n%s", after, before, left, errOut)
	}
	if j, _ := filepath.Glob(filepath.Join(otherHome, ".local/state/airlock/runs/*.json")); len(j) != 0 {
		t.Errorf("journals of the other user's run left: %v", j)
	}
	// The killed run's own journal is finished by its user's next start,
	// with nothing left to remove.
	again := exec.Command(shared, "run", "--workspace", ws, "--", "true")
	again.Env = cliEnv(home)
	if code, _, errOut := runCmd(t, again); code != 0 {
		t.Errorf("the killed run's user's next run: exit %d\n%s", code, errOut)
	}
	if j, _ := filepath.Glob(filepath.Join(home, ".local/state/airlock/runs/*.json")); len(j) != 0 {
		t.Errorf("journals of the killed run left: %v", j)
	}
}
