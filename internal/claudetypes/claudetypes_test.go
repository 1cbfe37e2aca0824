package claudetypes

import (
	"errors"
	"os"
	"testing"
)

// load returns the pinned types, skipping when they are not installed
// (failing in CI, where .ci/run installs them).
func load(t *testing.T) *Types {
	t.Helper()
	types, err := Load(".")
	if errors.Is(err, ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// The reader finds what the hook tests rely on; if the generated files
// change shape, this says so before the tests that use them mislead.
func TestLoad(t *testing.T) {
	types := load(t)
	read, ok := types.InputOf("Read")
	if !ok {
		t.Fatalf("no input type for Read among %d", len(types.Inputs))
	}
	for _, tt := range []struct {
		iface, field string
		kind         byte
		optional     bool
	}{
		{"FileReadInput", "file_path", 's', false},
		{"FileReadInput", "offset", 'n', true},
		{"GrepInput", "-o", 'b', true},
		{"GrepInput", "output_mode", 's', true},
		{"MonitorInput", "ws", 'o', true},
		{"AskUserQuestionInput", "questions", 'a', false},
		{"TodoWriteInput", "todos", 'a', false},
	} {
		f, ok := types.Inputs[tt.iface].Field(tt.field)
		if !ok || f.Kind != tt.kind || f.Optional != tt.optional {
			t.Errorf("%s.%s: %+v (found %v), want kind %c optional %v", tt.iface, tt.field, f, ok, tt.kind, tt.optional)
		}
	}
	if read.Name != "FileReadInput" {
		t.Errorf("Read's input is %s", read.Name)
	}
	if _, ok := types.Inputs["EnterPlanModeInput"]; !ok {
		t.Error("EnterPlanModeInput (an empty interface) is missing")
	}
	names := map[string]bool{}
	for _, f := range types.PreToolUseFields {
		names[f.Name] = true
	}
	for _, n := range []string{"session_id", "cwd", "permission_mode", "hook_event_name", "tool_name", "tool_input", "tool_use_id"} {
		if !names[n] {
			t.Errorf("PreToolUse input has no %s among %v", n, types.PreToolUseFields)
		}
	}
	if len(types.PermissionModes) < 5 || len(types.HookDecisions) < 3 || len(types.ToolNames) < 20 {
		t.Errorf("modes %v, decisions %v, %d tool names", types.PermissionModes, types.HookDecisions, len(types.ToolNames))
	}
	hook := Interface{Name: "command hook", Fields: types.CommandHookFields}
	for _, f := range []string{"type", "command", "args", "onFailure", "timeout"} {
		if _, ok := hook.Field(f); !ok {
			t.Errorf("the command hook entry has no %s: %+v", f, types.CommandHookFields)
		}
	}
	s, err := read.Sample(map[string]any{"file_path": "/ws/a", "pages": Omit})
	if err != nil || s["file_path"] != "/ws/a" || s["allow_large"] != true || s["pages"] != nil {
		t.Errorf("sample %v, %v", s, err)
	}
	if _, err := read.Sample(map[string]any{"path": "/ws/a"}); err == nil {
		t.Error("an override of a field Read does not have was accepted")
	}
}
