package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/tool"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadLayers(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	managed := filepath.Join(dir, "etc", "policy.toml")
	user := filepath.Join(dir, "home", ".config", "airlock", "policy.toml")
	writeFile(t, managed, `
[[rule]]
effect = "deny"
match = "Bash(curl *)"
reason = "no downloads"
`)
	writeFile(t, user, `
[[rule]]
effect = "allow"
match = "Bash(git log:*)"
`)
	writeFile(t, filepath.Join(ws, ".airlock", "policy.toml"), `
# project rules
[[rule]]
effect = "ask"
match = "Bash(git push:*)"

[[rule]]
effect  = "allow"
match   = "Bash(make)"
expires = 2020-01-01T00:00:00Z

  [[rule.example]]
  input = "make"
  expect = "allow"
`)
	writeFile(t, LocalPath(ws), `
[[rule]]
effect = "allow"
match = "Read(/docs/**)"
`)
	writeFile(t, filepath.Join(ws, ".claude", "settings.json"), `{
  "permissions": {
    "allow": ["Bash(npm test)"],
    "deny": ["Read(./.env)"]
  }
}`)
	writeFile(t, filepath.Join(ws, ".claude", "settings.local.json"), `{"permissions": {"ask": ["WebFetch"]}}`)

	s, err := Load(Sources{Workspace: ws, Home: filepath.Join(dir, "home"), Managed: managed})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Rules() {
		got = append(got, string(r.Layer)+" "+string(r.Effect)+" "+r.Match+" "+filepath.Base(r.Source)+":"+itoa(r.Line))
	}
	want := []string{
		"managed deny Bash(curl *) policy.toml:2",
		"user allow Bash(git log:*) policy.toml:2",
		"workspace ask Bash(git push:*) policy.toml:3",
		"workspace allow Bash(make) policy.toml:7",
		"workspace allow Bash(npm test) settings.json:3",
		"workspace deny Read(./.env) settings.json:4",
		"local allow Read(/docs/**) policy.local.toml:2",
		"local ask WebFetch settings.local.json:1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rules:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	now := time.Now()
	if r := s.Match(Deny, tool.Requirement{Kind: tool.KindCommandExecute, Target: "curl x"}, now); r == nil || r.Reason != "no downloads" {
		t.Errorf("managed deny: %v", r)
	}
	if r := s.Match(Allow, tool.Requirement{Kind: tool.KindCommandExecute, Target: "make"}, now); r != nil {
		t.Errorf("expired rule matched: %v", r)
	}
	if r := s.Match(Allow, tool.Requirement{Kind: tool.KindFilesystemRead, Target: filepath.Join(ws, "docs", "a.md")}, now); r == nil {
		t.Error("/docs/** in the local layer should be relative to the workspace")
	}
	var expired []string
	for _, f := range s.Findings(now) {
		expired = append(expired, f.Problem+" "+f.Rule.Match)
	}
	if strings.Join(expired, ",") != "expired Bash(make)" {
		t.Errorf("findings: %v", expired)
	}
	if ex := s.Rules()[3].Examples; len(ex) != 1 || ex[0].Input != `{"command":"make"}` || ex[0].Line != 12 || ex[0].Tool != "Bash" {
		t.Errorf("examples: %+v", ex)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestLoadErrorsNameFileLineAndRule(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		want    []string
	}{
		{"[[rule]]\neffect = \"allow\"\nmatch = \"Bash(\"\n", []string{"policy.toml:1", `rule "Bash("`, "closing parenthesis"}},
		{"[[rule]]\neffect = \"allow\"\nmatch = \"ls\"\n\n[[rule]]\neffect = \"permit\"\nmatch = \"Bash(ls)\"\n", []string{"policy.toml:5", `rule "Bash(ls)"`, "allow, ask or deny"}},
		{"[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls)\"\nexpires = \"soon\"\n", []string{"policy.toml:1", "RFC 3339"}},
		{"[[rule]]\neffect = \"allow\"\nmatch = = \"Bash(ls)\"\n", []string{"policy.toml:3"}},
		{"[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls)\"\nreasn = \"typo\"\n", []string{"policy.toml", "reasn"}},
		{"[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls)\"\n[[rule.example]]\ninput = \"ls\"\nexpect = \"maybe\"\n", []string{"policy.toml:4", "example"}},
	}
	for _, tt := range tests {
		ws := filepath.Join(dir, "ws")
		writeFile(t, filepath.Join(ws, ".airlock", "policy.toml"), tt.content)
		_, err := Load(Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
		var fe *FileError
		if !errors.As(err, &fe) {
			t.Errorf("%q: err %v, want a *FileError", tt.content, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not contain %q", tt.content, err, w)
			}
		}
	}
	writeFile(t, filepath.Join(dir, "c", ".claude", "settings.json"), "{\n  \"permissions\": {\"deny\": [\n \"Bash(\"]}}")
	_, err := Load(Sources{Workspace: filepath.Join(dir, "c"), Managed: "-", User: "-"})
	if err == nil || !strings.Contains(err.Error(), "settings.json:3") {
		t.Errorf("claude settings error: %v", err)
	}
}
