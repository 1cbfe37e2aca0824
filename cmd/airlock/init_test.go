package main

import (
	"encoding/json"
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
	wantExecEntry(t, first, bin, "hook", "claude-code")

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
	if code != 0 {
		t.Fatalf("--sandbox: exit %d %s\n%s", code, so, sandboxed)
	}
	wantExecEntry(t, sandboxed, bin, "hook", "claude-code", "--sandbox")
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

// wantExecEntry fails unless settings has one PreToolUse group for every
// tool whose one airlock entry is the exec form failing closed.
func wantExecEntry(t *testing.T, settings []byte, bin string, args ...string) {
	t.Helper()
	var doc struct {
		Hooks struct {
			PreToolUse []struct {
				Matcher string `json:"matcher"`
				Hooks   []struct {
					Type      string   `json:"type"`
					Command   string   `json:"command"`
					Args      []string `json:"args"`
					OnFailure string   `json:"onFailure"`
				} `json:"hooks"`
			} `json:"PreToolUse"`
		} `json:"hooks"`
	}
	must(t, json.Unmarshal(settings, &doc))
	pre := doc.Hooks.PreToolUse
	if len(pre) != 1 || pre[0].Matcher != "*" || len(pre[0].Hooks) != 1 {
		t.Fatalf("settings.json:\n%s", settings)
	}
	h := pre[0].Hooks[0]
	if h.Type != "command" || h.Command != bin || strings.Join(h.Args, " ") != strings.Join(args, " ") || h.OnFailure != "block" {
		t.Fatalf("the airlock entry is %+v, want command %s args %q onFailure block:\n%s", h, bin, args, settings)
	}
}

// A Claude Code that ignores "args" runs airlock alone: that blocks the
// call (exit 2), where the CLI's usage status would let it through.
func TestBareAirlockUnderClaudeCodeBlocks(t *testing.T) {
	bin := buildAirlock(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+t.TempDir())
	code, _, se := runCmd(t, cmd)
	if code != exitBlock || !strings.Contains(se, "blocked") {
		t.Fatalf("exit %d, stderr %s; want %d", code, se, exitBlock)
	}
	// A control: without Claude Code around, it is the CLI's usage error.
	if code, _, _ := runCLI(t, bin); code != exitUsage {
		t.Fatalf("exit %d without CLAUDE_PROJECT_DIR, want %d", code, exitUsage)
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
