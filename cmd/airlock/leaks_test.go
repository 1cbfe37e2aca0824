package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// A shell that opened a host file on fd 7 ("exec 7>>FILE") and runs
// airlock must not hand that descriptor to the command: the file is
// outside the workspace and nothing in the sandbox may write it. The
// control runs the same shell line without airlock, which writes it.
func TestRunInheritedDescriptor(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	log := filepath.Join(sandboxtest.OutsideDir(t), "host.log")
	if err := os.WriteFile(log, []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := sandboxtest.FileState(log)
	script := `exec 7>>"$1"; ` + `"$2" run --workspace "$3" -- sh -c 'echo pwned >&7'`
	out, err := exec.Command("bash", "-c", script, "probe", log, bin, ws).CombinedOutput()
	if sandboxtest.FileState(log) != before {
		t.Errorf("the sandboxed command wrote to the caller's fd 7 (%v): %s", err, out)
	}
	control := `exec 7>>"$1"; sh -c 'echo pwned >&7'`
	if out, err := exec.Command("bash", "-c", control, "probe", log).CombinedOutput(); err != nil {
		t.Fatalf("control: %v: %s", err, out)
	}
	if sandboxtest.FileState(log) == before {
		t.Fatal("control: sh without airlock did not write through fd 7; the test proves nothing")
	}
}
