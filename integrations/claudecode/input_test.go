package claudecode_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/integrations/claudecode"
)

// FuzzParseInput: whatever the bytes, ParseInput does not panic, and what
// it accepts is one valid JSON object for PreToolUse whose tool_input is
// an object and whose cwd is absolute.
func FuzzParseInput(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hook", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.ReplaceAll(data, []byte("$WS"), []byte("/ws")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := claudecode.ParseInput(data)
		if err != nil {
			return
		}
		if !json.Valid(data) || in.HookEventName != "PreToolUse" || !strings.HasPrefix(string(in.ToolInput), "{") ||
			!filepath.IsAbs(in.Cwd) || in.ToolName == "" || in.SessionID == "" || in.ToolUseID == "" {
			t.Fatalf("accepted %q as %+v", data, in)
		}
	})
}

func TestFindWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	proj := mk("proj")
	mk("proj/.git")
	sub := mk("proj/src/pkg")
	nested := mk("proj/tools/x")
	mk("proj/tools/x/.airlock")
	bare := mk("bare/dir")
	for _, tc := range []struct {
		cwd, projectDir, want string
	}{
		{sub, "", proj},
		{proj, "", proj},
		{nested, "", nested},
		{nested, proj, proj}, // Claude Code's project directory wins
		{bare, proj, bare},   // but only for a cwd inside it
		{bare, "", bare},
	} {
		if got := claudecode.FindWorkspace(tc.cwd, tc.projectDir); got != tc.want {
			t.Errorf("FindWorkspace(%s, %q) = %s, want %s", tc.cwd, tc.projectDir, got, tc.want)
		}
	}
}
