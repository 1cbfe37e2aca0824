package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestExecCLI(t *testing.T) {
	bin := buildAirlock(t)
	dir := t.TempDir()
	cat := filepath.Join(dir, "sandboxes.toml")
	if err := os.WriteFile(cat, []byte(`
[sandbox.sh]
provider = "local"
timeout = "20s"

[sandbox.other]
provider = "local"

[agent.reviewer]
sandboxes = ["sh"]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte("[sandbox.sh]\nprovider = \"local\"\nmemory = \"much\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("input"), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Status      string            `json:"status"`
		ExitCode    int               `json:"exit_code"`
		Stdout      string            `json:"stdout"`
		Stderr      string            `json:"stderr"`
		ExecutionID string            `json:"execution_id"`
		Timings     map[string]int64  `json:"timings"`
		OutputFiles map[string][]byte `json:"output_files"`
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		status string
		stdout string
		stderr string
	}{
		{"code", []string{"--agent", "reviewer", "--sandbox", "sh", "--lang", "sh", "--code", "cat in; echo out > o", "--input", "in=" + in, "--output", "o"}, 0, "succeeded", "input", ""},
		{"argv", []string{"--sandbox", "sh", "--", "sh", "-c", "echo $0", "arg"}, 0, "succeeded", "arg\n", ""},
		{"python", []string{"--sandbox", "sh", "--code", "print(6*7)"}, 0, "succeeded", "42\n", ""},
		{"failed is still a result", []string{"--sandbox", "sh", "--lang", "sh", "--code", "exit 4"}, 0, "failed", "", ""},
		{"timed out is still a result", []string{"--sandbox", "sh", "--timeout", "500ms", "--", "sleep", "10"}, 0, "timed_out", "", ""},
		{"not assigned", []string{"--agent", "reviewer", "--sandbox", "other", "--", "true"}, 1, "", "", "not assigned"},
		{"unknown agent", []string{"--agent", "nobody", "--sandbox", "sh", "--", "true"}, 1, "", "", "not assigned"},
		{"bad config", []string{"--config", bad, "--sandbox", "sh", "--", "true"}, 1, "", "", "bad.toml:3: sandbox.sh.memory"},
		{"no program", []string{"--sandbox", "sh"}, 125, "", "", "--code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"exec"}, tc.args...)
			if !strings.Contains(strings.Join(tc.args, " "), "--config") {
				args = append([]string{"exec", "--config", cat}, tc.args...)
			}
			code, stdout, stderr := runCLI(t, bin, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			if tc.stderr != "" {
				if !strings.Contains(stderr, tc.stderr) || strings.Count(stderr, "\n") != 1 || stdout != "" {
					t.Errorf("stderr %q, want one line with %q (stdout %q)", stderr, tc.stderr, stdout)
				}
				return
			}
			var r result
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("stdout is not one JSON Result: %v\n%s", err, stdout)
			}
			if r.Status != tc.status || !strings.HasPrefix(r.Stdout, tc.stdout) || r.ExecutionID == "" || r.Timings == nil {
				t.Errorf("got %+v", r)
			}
			if tc.name == "code" && string(r.OutputFiles["o"]) != "out\n" {
				t.Errorf("output files %q", r.OutputFiles)
			}
		})
	}

	code, stdout, _ := runCLI(t, bin, "exec", "--config", cat, "--list", "--agent", "reviewer")
	if code != 0 || !strings.Contains(stdout, "sh ") || strings.Contains(stdout, "other") {
		t.Errorf("--list as reviewer: %d %q", code, stdout)
	}
	_, stdout, _ = runCLI(t, bin, "exec", "--config", cat, "--list")
	if !strings.Contains(stdout, "other") {
		t.Errorf("--list as the operator: %q", stdout)
	}
}

// TestExecUnprivileged runs airlock exec as uid 65534: the local provider
// either runs with every budget enforced or refuses with one line naming
// the guarantee the host does not give that user, never runs with a
// budget silently dropped.
func TestExecUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to switch to uid 65534")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux)")
	}
	bin := buildAirlock(t)
	dir := t.TempDir()
	for _, p := range []string{filepath.Dir(dir), dir, filepath.Dir(filepath.Dir(bin)), filepath.Dir(bin)} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cat := filepath.Join(dir, "sandboxes.toml")
	if err := os.WriteFile(cat, []byte("[sandbox.sh]\nprovider = \"local\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
		bin, "exec", "--config", cat, "--sandbox", "sh", "--lang", "sh", "--code", "echo hi")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=/usr/bin:/bin"}
	var so, se strings.Builder
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	switch {
	case err == nil:
		if !strings.Contains(so.String(), `"status":"succeeded"`) {
			t.Errorf("exit 0 without a succeeded Result: %s", so.String())
		}
	case cmd.ProcessState.ExitCode() == 1:
		if !strings.Contains(se.String(), "sandbox unavailable") || !strings.Contains(se.String(), "resource-limits") || strings.Count(se.String(), "\n") != 1 {
			t.Errorf("refusal is not one line naming the missing guarantee: %q", se.String())
		}
		t.Logf("as uid 65534: %s", se.String())
	default:
		t.Errorf("exit %v: %s %s", err, so.String(), se.String())
	}
}
