package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestInitClaudeCode(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	settings := filepath.Join(ws, ".claude", "settings.json")

	code, so, se := runCLI(t, bin, "init", "claude-code", "--workspace", ws)
	if code != 0 || !strings.Contains(so, "now runs") {
		t.Fatalf("first init: exit %d %s %s", code, so, se)
	}
	first, err := os.ReadFile(settings)
	must(t, err)
	if !strings.Contains(string(first), `"command": "`+bin+` hook claude-code"`) || !strings.Contains(string(first), `"matcher": "*"`) {
		t.Fatalf("settings.json:\n%s", first)
	}

	code, so, _ = runCLI(t, bin, "init", "claude-code", "--workspace", ws)
	again, _ := os.ReadFile(settings)
	if code != 0 || !strings.Contains(so, "nothing changed") || string(again) != string(first) {
		t.Fatalf("second init: exit %d %s", code, so)
	}
	if _, err := os.Stat(settings + ".airlock-backup"); err == nil {
		t.Fatal("an unchanged file was backed up")
	}

	code, so, _ = runCLI(t, bin, "init", "claude-code", "--workspace", ws, "--sandbox")
	sandboxed, _ := os.ReadFile(settings)
	if code != 0 || !strings.Contains(string(sandboxed), "hook claude-code --sandbox") || strings.Count(string(sandboxed), "hook claude-code") != 1 {
		t.Fatalf("--sandbox: exit %d %s\n%s", code, so, sandboxed)
	}
	if backup, _ := os.ReadFile(settings + ".airlock-backup"); string(backup) != string(first) {
		t.Fatal("the backup is not the previous file")
	}

	bad := []byte("{\"hooks\": {\"PreToolUse\": [}\n")
	must(t, os.WriteFile(settings, bad, 0o644))
	code, _, se = runCLI(t, bin, "init", "claude-code", "--workspace", ws)
	if now, _ := os.ReadFile(settings); code != 1 || !strings.Contains(se, "not valid JSON") || string(now) != string(bad) {
		t.Fatalf("invalid JSON: exit %d %s; the file must stay as it was", code, se)
	}
}

func TestInitClaudeCodeUser(t *testing.T) {
	bin := buildAirlock(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "init", "claude-code", "--user")
	cmd.Env = append(os.Environ(), "HOME="+home)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	fi, err := os.Stat(filepath.Join(home, ".claude", "settings.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("user settings: %v %v", fi, err)
	}
}

func TestHookAndInitHelp(t *testing.T) {
	bin := buildAirlock(t)
	for _, args := range [][]string{{"hook", "--help"}, {"hook", "claude-code", "--help"}, {"init", "--help"}, {"init", "claude-code", "--help"}} {
		code, so, _ := runCLI(t, bin, args...)
		if code != 0 || !strings.Contains(so, `"PreToolUse": [`) || !strings.Contains(so, `"type": "command"`) {
			t.Errorf("%v: exit %d, the settings snippet is missing:\n%s", args, code, so)
		}
	}
	code, so, _ := runCLI(t, bin, "--help")
	if code != 0 || !strings.Contains(so, "hook") || !strings.Contains(so, "init") {
		t.Errorf("airlock --help does not list hook and init:\n%s", so)
	}
	// Whatever goes wrong before a decision blocks the call: exit 2,
	// never another status, which Claude Code would treat as "go ahead".
	for _, args := range [][]string{{"hook"}, {"hook", "codex"}, {"hook", "claude-code", "--no-such-flag"}, {"hook", "claude-code", "extra"}} {
		if code, _, _ := runCLI(t, bin, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	cmd := exec.Command(bin, "hook", "claude-code", "--audit", "/proc/no-such-dir/audit.jsonl")
	cmd.Stdin = strings.NewReader(`{}`)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "audit log") {
		t.Errorf("an audit log that cannot be opened: %v %s; want exit 2 saying so", err, out)
	}
}
