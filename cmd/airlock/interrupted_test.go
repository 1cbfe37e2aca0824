package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// plantProfile is a run that tries to write a workspace profile widening
// every later run (write access to $1) and an editor task, which the
// placeholders the start made refuse, and makes a nested repository with
// a config that runs a program, which only the end-of-run check catches;
// then it waits.
const plantProfile = `mkdir -p .airlock .vscode; printf '[filesystem]\nwrite = ["%s"]\n' "$1" > .airlock/profile.toml; echo '{}' > .vscode/tasks.json; mkdir -p sub/.git && printf '[core]\n\tfsmonitor = touch /tmp/x\n' > sub/.git/config; touch ready; sleep 60`

// cliEnv is the environment of an airlock process in these tests: its
// own HOME, so its run journals are its own.
func cliEnv(home string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8"}
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 400 && !sandboxtest.Exists(path); i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if !sandboxtest.Exists(path) {
		t.Fatalf("%s never appeared", path)
	}
}

// TestInterruptedRunIsChecked: a supervisor killed outright (SIGKILL from
// a harness timeout) never runs its end-of-run check nor removes its
// placeholders. The next start does both, before the workspace's
// .airlock/ is read: the profile the killed run tried to plant must not
// widen the next run, and no placeholder is left.
func TestInterruptedRunIsChecked(t *testing.T) {
	bin := buildAirlock(t)
	home, ws, outside := t.TempDir(), sandboxtest.Workspace(t), t.TempDir()
	before := dirNames(t, ws)
	cmd := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", plantProfile, "plant", outside)
	cmd.Env = cliEnv(home)
	must(t, cmd.Start())
	waitFile(t, filepath.Join(ws, "ready"))
	must(t, cmd.Process.Signal(syscall.SIGKILL))
	cmd.Wait()
	os.Remove(filepath.Join(ws, "ready"))
	// The supervisor died before any check: its placeholders (empty,
	// nothing of the run's in them) and its journal are there; the
	// nested repository was refused when it was made (the create guard).
	if sandboxtest.Exists(filepath.Join(ws, ".airlock", "profile.toml")) || sandboxtest.Exists(filepath.Join(ws, ".vscode", "tasks.json")) {
		t.Error("ATTACK SUCCEEDED: the run wrote into a placeholder")
	}
	if sandboxtest.Exists(filepath.Join(ws, "sub", ".git")) {
		t.Error("ATTACK SUCCEEDED: the killed run made sub/.git")
	}
	// Under the create guard no placeholder is made: the names stay
	// absent on the host.
	guarded := sandbox.ProbeHost().CreateGuard
	for _, name := range []string{".airlock", ".vscode", ".git"} {
		_, err := os.Lstat(filepath.Join(ws, name))
		if guarded && err == nil {
			t.Errorf("%s is on the host during a run under the create guard", name)
		}
		if !guarded && err != nil {
			t.Fatalf("%s of the killed run is gone before the next start: nothing left to test (%v)", name, err)
		}
	}
	if j, _ := filepath.Glob(filepath.Join(home, ".local/state/airlock/runs/*.json")); len(j) != 1 {
		t.Fatalf("journals of the killed run: %v", j)
	}

	next := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", `touch "$1/pwned"; echo next`, "probe", outside)
	next.Env = cliEnv(home)
	out, err := next.CombinedOutput()
	if sandboxtest.Exists(filepath.Join(outside, "pwned")) {
		t.Errorf("ATTACK SUCCEEDED: the profile a killed run planted widened the next run: %v\n%s", err, out)
	}
	if sandboxtest.Exists(filepath.Join(ws, "sub", ".git")) {
		t.Errorf("sub/.git made by the killed run is still in place after the next start\n%s", out)
	}
	os.RemoveAll(filepath.Join(ws, "sub"))
	if after := dirNames(t, ws); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("workspace after the next start %v, before the killed run %v (placeholders left?)\n%s", after, before, out)
	}
	if j, _ := filepath.Glob(filepath.Join(home, ".local/state/airlock/runs/*.json")); len(j) != 0 {
		t.Errorf("journals left: %v", j)
	}

	// Control: the same profile written on the host does widen a run.
	ws2 := sandboxtest.Workspace(t)
	must(t, os.MkdirAll(filepath.Join(ws2, ".airlock"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws2, ".airlock", "profile.toml"), []byte("[filesystem]\nwrite = [\""+outside+"\"]\n"), 0o644))
	ctl := exec.Command(bin, "run", "--workspace", ws2, "--", "sh", "-c", `touch "$1/pwned"`, "probe", outside)
	ctl.Env = cliEnv(home)
	if out, err := ctl.CombinedOutput(); err != nil || !sandboxtest.Exists(filepath.Join(outside, "pwned")) {
		t.Fatalf("positive control failed: a workspace profile written on the host did not widen the run: %v\n%s", err, out)
	}
}

// TestRunSurvivesClosedStdout: `airlock run ... | head` closes the
// supervisor's stdout while the command still writes. The supervisor
// must not die of SIGPIPE before its end-of-run check.
func TestRunSurvivesClosedStdout(t *testing.T) {
	bin := buildAirlock(t)
	home, ws := t.TempDir(), sandboxtest.Workspace(t)
	cmd := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", `mkdir .vscode && echo '{}' > .vscode/tasks.json; i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done; sleep 0.3; echo more`)
	cmd.Env = cliEnv(home)
	stdout, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	// Like head -n 1: read a little, then close.
	buf := make([]byte, 16)
	if _, err := io.ReadFull(stdout, buf); err != nil {
		t.Fatal(err)
	}
	stdout.Close()
	err = cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Errorf("the supervisor died of %s", ws.Signal())
		}
	}
	if sandboxtest.Exists(filepath.Join(ws, ".vscode")) {
		t.Error("ATTACK SUCCEEDED: .vscode the run created is in place after the supervisor exited")
	}
}

// TestRunFailsWhenCheckFails: an end-of-run check that cannot finish
// (here the workspace the run started in was moved away on the host and
// another put in its place) fails the run with exit 125 and says why,
// even though the command itself succeeded; the next start checks again.
func TestRunFailsWhenCheckFails(t *testing.T) {
	bin := buildAirlock(t)
	home, parent := t.TempDir(), t.TempDir()
	ws := filepath.Join(parent, "ws")
	must(t, os.Mkdir(ws, 0o755))
	cmd := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", `touch ready; sleep 1; echo done`)
	cmd.Env = cliEnv(home)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	must(t, cmd.Start())
	waitFile(t, filepath.Join(ws, "ready"))
	must(t, os.Rename(ws, ws+".moved"))
	must(t, os.Mkdir(ws, 0o755))
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 125 || !strings.Contains(out.String(), "check of protected paths failed") {
		t.Errorf("a failed check did not fail the run: %v\n%s", err, out.String())
	}
	// Control: the command itself ran to its end.
	if !strings.Contains(out.String(), "done") {
		t.Fatalf("positive control failed: the command did not finish\n%s", out.String())
	}
	// The next start tries again, and still refuses.
	code, _, stderr := runCLIEnv(t, bin, cliEnv(home), "run", "--workspace", ws, "--", "true")
	if code != 125 || !strings.Contains(stderr, "journal") {
		t.Errorf("the next start ran past an unfinished check: exit %d\n%s", code, stderr)
	}
	// Scoped: a run in another workspace is not held up by it, and is
	// told about it.
	other := t.TempDir()
	code, _, stderr = runCLIEnv(t, bin, cliEnv(home), "run", "--workspace", other, "--", "true")
	if code != 0 || !strings.Contains(stderr, "could not finish") {
		t.Errorf("a run in another workspace: exit %d (want 0 and a warning)\n%s", code, stderr)
	}
	// airlock doctor lists it.
	code, stdout, _ := runCLIEnv(t, bin, cliEnv(home), "doctor", "--workspace", other)
	if !strings.Contains(stdout, "pending run journal") || !strings.Contains(stdout, ws) {
		t.Errorf("airlock doctor does not list the pending journal (exit %d):\n%s", code, stdout)
	}
}

func runCLIEnv(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	return runCmd(t, cmd)
}

// TestPlantedProfileDoesNotWiden: a run that ends normally after
// planting .airlock/profile.toml leaves nothing a later run reads.
func TestPlantedProfileDoesNotWiden(t *testing.T) {
	bin := buildAirlock(t)
	home, ws, outside := t.TempDir(), sandboxtest.Workspace(t), t.TempDir()
	plant := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", `mkdir -p .airlock && printf '[filesystem]\nwrite = ["%s"]\n' "$1" > .airlock/profile.toml`, "plant", outside)
	plant.Env = cliEnv(home)
	out, _ := plant.CombinedOutput()
	next := exec.Command(bin, "run", "--workspace", ws, "--", "sh", "-c", `touch "$1/pwned"`, "probe", outside)
	next.Env = cliEnv(home)
	out2, _ := next.CombinedOutput()
	if sandboxtest.Exists(filepath.Join(outside, "pwned")) {
		t.Errorf("ATTACK SUCCEEDED: a planted workspace profile widened the next run\n%s\n%s", out, out2)
	}
	if !strings.Contains(string(out), ".airlock") {
		t.Errorf("the planting run did not report moving .airlock aside:\n%s", out)
	}
}

// dirNames lists the names at the top of dir but quarantined ones.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		if !strings.Contains(e.Name(), ".airlock-quarantine-") {
			names = append(names, e.Name())
		}
	}
	return names
}
