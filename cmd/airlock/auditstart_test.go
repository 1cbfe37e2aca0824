package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestRunAuditSpawnAtStart: the spawn event is in the audit log while the
// command still runs (a follower sees a long run as it happens), and the
// log holds it once.
func TestRunAuditSpawnAtStart(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(bin, "run", "--workspace", ws, "--audit", log, "--", "sh", "-c",
		"touch started; while [ ! -e go ]; do sleep 0.05; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _, _ = cmd.Process.Wait() })
	for i := 0; !sandboxtest.Exists(filepath.Join(ws, "started")); i++ {
		if i > 1000 {
			t.Fatal("the command did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, _ := os.ReadFile(log)
	if !strings.Contains(string(data), `"spawn"`) {
		t.Errorf("no spawn event while the command runs: %q", data)
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(log)
	if n := strings.Count(string(data), `"spawn"`); n != 1 || !strings.Contains(string(data), `"exit"`) {
		t.Errorf("want one spawn and an exit event:\n%s", data)
	}
}
