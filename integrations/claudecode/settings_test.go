package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/integrations/claudecode"
)

const airlockPath = "/opt/airlock/bin/airlock"

var hookCmd = claudecode.AirlockHook(airlockPath, false)

// airlockEntries returns the PreToolUse hook entries of a settings
// document that run airlock.
func airlockEntries(t *testing.T, doc []byte) []map[string]any {
	t.Helper()
	var d struct {
		Hooks map[string][]struct {
			Matcher string           `json:"matcher"`
			Hooks   []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("%v in\n%s", err, doc)
	}
	var out []map[string]any
	for _, g := range d.Hooks["PreToolUse"] {
		for _, h := range g.Hooks {
			if c, _ := h["command"].(string); strings.HasSuffix(c, "/airlock") || strings.Contains(c, "airlock hook") {
				h["matcher"] = g.Matcher
				out = append(out, h)
			}
		}
	}
	return out
}

// wantEntry fails unless doc has exactly one airlock entry, for every
// tool, in the exec form running airlock with args, failing closed.
func wantEntry(t *testing.T, doc []byte, airlock string, args ...string) {
	t.Helper()
	es := airlockEntries(t, doc)
	if len(es) != 1 {
		t.Fatalf("%d airlock entries, want 1:\n%s", len(es), doc)
	}
	e := es[0]
	got, _ := json.Marshal(e["args"])
	want, _ := json.Marshal(args)
	if e["type"] != "command" || e["command"] != airlock || string(got) != string(want) || e["onFailure"] != "block" || e["matcher"] != "*" {
		t.Fatalf("airlock entry %v, want command %s args %s onFailure block matcher *:\n%s", e, airlock, want, doc)
	}
}

// existing is a settings file with other keys, other hooks and numbers
// whose text must survive.
const existing = `{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm test)"],
    "deny": []
  },
  "hooks": {
    "PostToolUse": [
      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}
    ],
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
    ]
  },
  "cleanupPeriodDays": 1.50e1,
  "env": {"Z": "1", "A": "2"}
}
`

func TestRegisterHookMerges(t *testing.T) {
	out, changed, err := claudecode.RegisterHook([]byte(existing), hookCmd)
	if err != nil || !changed {
		t.Fatalf("changed %v err %v", changed, err)
	}
	s := string(out)
	// Key order and the number's text are kept.
	order := []string{`"model"`, `"permissions"`, `"hooks"`, `"PostToolUse"`, `"PreToolUse"`, `"./check.sh"`, airlockPath, `"onFailure": "block"`, `"cleanupPeriodDays": 1.50e1`, `"env"`, `"Z"`, `"A"`}
	last := -1
	for _, k := range order {
		i := strings.Index(s, k)
		if i < 0 || i < last {
			t.Fatalf("%s missing or out of order in\n%s", k, s)
		}
		last = i
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct {
				Type, Command string
				Timeout       int
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	pre := doc.Hooks["PreToolUse"]
	if len(pre) != 2 || pre[0].Hooks[0].Command != "./check.sh" || pre[0].Hooks[0].Timeout != 30 ||
		pre[1].Matcher != "*" || pre[1].Hooks[0].Type != "command" || pre[1].Hooks[0].Command != airlockPath {
		t.Fatalf("PreToolUse = %+v", pre)
	}
	wantEntry(t, out, airlockPath, "hook", "claude-code")
	if len(doc.Hooks["PostToolUse"]) != 1 {
		t.Fatal("PostToolUse hooks lost")
	}

	// A second run changes nothing, byte for byte.
	again, changed, err := claudecode.RegisterHook(out, hookCmd)
	if err != nil || changed || string(again) != string(out) {
		t.Fatalf("second run: changed %v err %v", changed, err)
	}
	// Another path or --sandbox updates the one entry in place.
	sandboxed := claudecode.AirlockHook("/usr/bin/airlock", true)
	upd, changed, err := claudecode.RegisterHook(out, sandboxed)
	if err != nil || !changed {
		t.Fatalf("update: changed %v err %v\n%s", changed, err, upd)
	}
	wantEntry(t, upd, "/usr/bin/airlock", "hook", "claude-code", "--sandbox")
	if strings.Index(string(upd), "/usr/bin/airlock") != strings.Index(string(out), airlockPath) {
		t.Error("the updated entry moved")
	}
}

// An entry in the shell form that earlier versions wrote, or one without
// onFailure, is turned into the exec form that fails closed, in place,
// keeping what a person added to it.
func TestRegisterHookUpgradesShellForm(t *testing.T) {
	for _, in := range []string{
		`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/airlock/bin/airlock hook claude-code", "timeout": 20}]}]}}`,
		`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/airlock/bin/airlock", "args": ["hook", "claude-code"], "timeout": 20}]}]}}`,
		`{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "/opt/airlock/bin/airlock", "args": ["hook", "claude-code"], "onFailure": "continue", "timeout": 20}]}]}}`,
	} {
		out, changed, err := claudecode.RegisterHook([]byte(in), hookCmd)
		if err != nil || !changed {
			t.Fatalf("%s: changed %v err %v", in, changed, err)
		}
		wantEntry(t, out, airlockPath, "hook", "claude-code")
		if airlockEntries(t, out)[0]["timeout"] != 20.0 {
			t.Errorf("the entry's timeout was lost:\n%s", out)
		}
		if again, changed, _ := claudecode.RegisterHook(out, hookCmd); changed || string(again) != string(out) {
			t.Errorf("a second run changed it again:\n%s", again)
		}
	}
}

func TestRegisterHookDeduplicates(t *testing.T) {
	in := `{"hooks": {"PreToolUse": [
	  {"matcher": "Bash", "hooks": [{"type": "command", "command": "airlock hook claude-code"}]},
	  {"matcher": "*", "hooks": [{"type": "command", "command": "'/my dir/airlock' hook claude-code --sandbox"}, {"type": "command", "command": "other"}]}
	]}}`
	out, changed, err := claudecode.RegisterHook([]byte(in), hookCmd)
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	wantEntry(t, out, airlockPath, "hook", "claude-code")
	if !strings.Contains(string(out), `"other"`) || strings.Contains(string(out), `"Bash"`) {
		t.Fatalf("want the Bash-only group (now empty) gone and the other hook kept:\n%s", out)
	}
}

func TestRegisterHookRefuses(t *testing.T) {
	for name, in := range map[string]string{
		"not json":        `{"hooks": {`,
		"comments":        "{\n // a comment\n \"model\": \"x\"\n}",
		"array":           `[]`,
		"duplicate key":   `{"hooks": {}, "hooks": {}}`,
		"hooks a string":  `{"hooks": "none"}`,
		"PreToolUse obj":  `{"hooks": {"PreToolUse": {}}}`,
		"group a string":  `{"hooks": {"PreToolUse": ["x"]}}`,
		"group hooks obj": `{"hooks": {"PreToolUse": [{"hooks": {}}]}}`,
		"trailing":        `{} {}`,
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := claudecode.RegisterHook([]byte(in), hookCmd); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestInstallHook(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".claude", "settings.json")

	// A missing file is created.
	res, err := claudecode.InstallHook(path, hookCmd, 0o644)
	if err != nil || !res.Changed || res.Backup != "" {
		t.Fatalf("create: %+v %v", res, err)
	}
	if fi, _ := os.Stat(path); fi == nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("created file mode: %v", fi)
	}

	// An existing file is backed up, merged and keeps its mode.
	if err := os.WriteFile(path, []byte(existing), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	res, err = claudecode.InstallHook(path, hookCmd, 0o644)
	if err != nil || !res.Changed || res.Backup != path+".airlock-backup" {
		t.Fatalf("merge: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(res.Backup); string(b) != existing {
		t.Fatal("the backup is not the previous file")
	}
	merged, _ := os.ReadFile(path)
	if wantEntry(t, merged, airlockPath, "hook", "claude-code"); !strings.Contains(string(merged), `"./check.sh"`) {
		t.Fatalf("merged file:\n%s", merged)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want the file's own 0640", fi.Mode().Perm())
	}

	// Idempotent: nothing written, no new backup.
	res, err = claudecode.InstallHook(path, hookCmd, 0o644)
	if err != nil || res.Changed || res.Backup != "" {
		t.Fatalf("second run: %+v %v", res, err)
	}
	if again, _ := os.ReadFile(path); string(again) != string(merged) {
		t.Fatal("the second run changed the file")
	}

	// A change keeps the first backup and writes a numbered one.
	res, err = claudecode.InstallHook(path, claudecode.AirlockHook("/opt/airlock/bin/airlock", true), 0o644)
	if err != nil || res.Backup != path+".airlock-backup.1" {
		t.Fatalf("third run: %+v %v", res, err)
	}

	left, _ := filepath.Glob(filepath.Join(dir, ".claude", ".settings-*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestInstallHookInvalidUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "settings.json")
	bad := "{\"model\": \"opus\",,}\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := claudecode.InstallHook(path, hookCmd, 0o644)
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") || !strings.Contains(err.Error(), "was not changed") {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != bad {
		t.Fatal("an invalid file was changed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("files besides settings.json: %v", entries)
	}
}

func TestInstallHookFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles-settings.json")
	if err := os.WriteFile(target, []byte(`{"model": "opus"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if _, err := claudecode.InstallHook(link, hookCmd, 0o644); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(link); fi.Mode()&os.ModeSymlink == 0 {
		t.Fatal("the symlink was replaced by a file")
	}
	if b, _ := os.ReadFile(target); !strings.Contains(string(b), airlockPath) {
		t.Fatal("the target was not updated")
	}
}

func TestHookCommandQuotes(t *testing.T) {
	if got := claudecode.AirlockHook("/home/a b/airlock", false).String(); got != "'/home/a b/airlock' hook claude-code" {
		t.Fatalf("got %s", got)
	}
}
