package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestRunWorkspaceRefused: airlock run refuses a workspace that is the
// caller's home, a system directory or the host's sysfs before anything
// runs (exit 125, one line saying why); --force-workspace accepts the
// first two, never /sys. Evidence: the command's marker, which it prints
// and writes into the workspace, is absent; the positive control is the
// same command with an ordinary workspace.
func TestRunWorkspaceRefused(t *testing.T) {
	bin := buildAirlock(t)
	home := t.TempDir()
	ws := t.TempDir()
	marker := sandboxtest.Marker(t, "ws")
	sysLink := filepath.Join(t.TempDir(), "sys")
	if err := os.Symlink("/sys", sysLink); err != nil {
		t.Fatal(err)
	}
	// The probe lists the host's sysfs if it can see it, and leaves a
	// file in its workspace when it can write there.
	probe := []string{"--", "sh", "-c", `ls /sys/kernel 2>/dev/null | head -3; echo ` + marker + `; touch ./` + marker + ` 2>/dev/null; true`}
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := append([]string{"run"}, args...)
		cmd = append(cmd, probe...)
		return runCLIExtraEnv(t, bin, []string{"HOME=" + home}, cmd...)
	}

	code, so, se := run("--workspace", ws)
	if code != 0 || !strings.Contains(so, marker) || !sandboxtest.Exists(filepath.Join(ws, marker)) {
		t.Fatalf("positive control failed: exit %d stdout %q stderr %q", code, so, se)
	}

	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"home", []string{"--workspace", home}, "your home directory"},
		{"etc", []string{"--workspace", "/etc", "--read-only"}, "system directory /etc"},
		{"sys", []string{"--workspace", "/sys"}, "own /sys"},
		{"sys forced", []string{"--workspace", "/sys", "--force-workspace"}, "own /sys"},
		{"sys through a symlink", []string{"--workspace", sysLink, "--force-workspace"}, "own /sys"},
		{"root forced", []string{"--workspace", "/", "--force-workspace"}, "whole filesystem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, so, se := run(tt.args...)
			if code != exitSetup || !strings.Contains(se, tt.stderr) || strings.Count(strings.TrimSpace(se), "\n") != 0 {
				t.Errorf("exit %d stderr %q; want %d and one line saying %q", code, se, exitSetup, tt.stderr)
			}
			if strings.Contains(so, marker) || so != "" {
				t.Errorf("ATTACK SUCCEEDED: the command ran with workspace %v: %q", tt.args, so)
			}
		})
	}
	if sandboxtest.Exists(filepath.Join(home, marker)) {
		t.Errorf("ATTACK SUCCEEDED: the command wrote into the home directory")
	}

	// Forced, home is accepted: the caller decided.
	code, so, se = run("--workspace", home, "--force-workspace")
	if code != 0 || !strings.Contains(so, marker) || !sandboxtest.Exists(filepath.Join(home, marker)) {
		t.Errorf("--force-workspace on home: exit %d stdout %q stderr %q", code, so, se)
	}
}

// TestRunMaxWrite: --max-write ends a run that writes past it with
// status limit_exceeded in the report, and is refused when malformed.
func TestRunMaxWrite(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	report := filepath.Join(t.TempDir(), "report.json")
	fill := `for i in $(seq 1 32); do head -c 1048576 /dev/zero > f$i || exit 1; done`
	code, _, se := runCLI(t, bin, "run", "--workspace", ws, "--max-write", "64MiB", "--", "sh", "-c", fill)
	if code != 0 {
		t.Fatalf("positive control failed: 32 MiB under a 64 MiB budget: exit %d %s", code, se)
	}
	ws = t.TempDir()
	code, _, se = runCLI(t, bin, "run", "--workspace", ws, "--max-write", "8MiB", "--report", report, "--", "sh", "-c", fill)
	data, _ := os.ReadFile(report)
	if code == 0 || !strings.Contains(string(data), `"status": "limit_exceeded"`) || !strings.Contains(se, "write budget") {
		t.Errorf("exit %d stderr %q report %s; want a failure, status limit_exceeded and a write denial", code, se, data)
	}
	code, _, se = runCLI(t, bin, "run", "--workspace", ws, "--max-write", "lots", "--", "true")
	if code != exitSetup || !strings.Contains(se, "--max-write") {
		t.Errorf("bad --max-write: exit %d stderr %q", code, se)
	}
}

// runCLIExtraEnv runs airlock with env added to the test's environment.
func runCLIExtraEnv(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runCLIEnv(t, bin, append(os.Environ(), env...), args...)
}
