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
