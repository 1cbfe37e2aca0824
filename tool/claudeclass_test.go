package tool

import (
	"errors"
	"testing"
)

func TestClaudeCodeClass(t *testing.T) {
	for _, tt := range []struct {
		name string
		want ToolClass
	}{
		{"Bash", ClassGated},
		{"WebSearch", ClassGated},
		{"mcp__github__create_issue", ClassGated},
		{"Agent", ClassOrchestration},
		{"AskUserQuestion", ClassOrchestration},
		{"TodoWrite", ClassOrchestration},
		{"ExitPlanMode", ClassOrchestration},
		{"EnterWorktree", ClassOpaque},
		{"Workflow", ClassOpaque},
		{"NoSuchTool", ClassUnknown},
		{"mcp__github", ClassUnknown}, // no tool after the server
		{"", ClassUnknown},
	} {
		if got := ClaudeCode(tt.name).Class; got != tt.want {
			t.Errorf("ClaudeCode(%q).Class = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// Every tool classified as gated has a preparer: the gate derives its
// requirements rather than refusing it as unknown.
func TestClaudeCodeGatedToolsHavePreparers(t *testing.T) {
	for _, name := range ClaudeCodeTools() {
		if _, ok := builtin[name]; ClaudeCode(name).Class == ClassGated && !ok {
			t.Errorf("%s is gated but has no built-in preparer", name)
		}
	}
}

func TestClaudeCodePreparers(t *testing.T) {
	tests := []struct {
		tool, input string
		want        string // the one requirement, or "" for ErrUnknownTool
	}{
		// Not gated: one tool.invoke of the name, so a rule naming it decides.
		{"Agent", `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`, "tool.invoke Agent"},
		{"AskUserQuestion", `{"questions":[]}`, "tool.invoke AskUserQuestion"},
		{"EnterWorktree", `{}`, "tool.invoke EnterWorktree"},
		{"BrandNewTool", `{"x":1}`, "tool.invoke BrandNewTool"},
		// Gated: the tool's own preparer.
		{"Read", `{"file_path":"/ws/a","allow_large":true}`, "filesystem.read /ws/a"},
		{"mcp__s__t", `{}`, "tool.invoke mcp__s__t"},
	}
	for _, tt := range tests {
		reqs, err := ClaudeCodePreparers(nil, tt.tool).Prepare(Call{Tool: tt.tool, Input: []byte(tt.input), Workspace: "/ws"})
		if err != nil {
			t.Errorf("%s: %v", tt.tool, err)
			continue
		}
		if len(reqs) != 1 || reqs[0].String() != tt.want || reqs[0].Tool != tt.tool {
			t.Errorf("%s: requirements %v, want [%s]", tt.tool, reqs, tt.want)
		}
	}
	// Input the gate could read two ways is still refused.
	if _, err := ClaudeCodePreparers(nil, "Agent").Prepare(Call{Tool: "Agent", Input: []byte(`{"prompt":"a","prompt":"b"}`), Workspace: "/ws"}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Agent with a duplicate key: %v, want ErrInvalidInput", err)
	}
	// The caller's preparers are kept and not changed.
	own := Preparers{"Read": builtin["Read"]}
	p := ClaudeCodePreparers(own, "Agent")
	if _, ok := own["Agent"]; ok {
		t.Error("ClaudeCodePreparers added Agent to the caller's map")
	}
	if _, err := p.Prepare(Call{Tool: "Bash", Input: []byte(`{"command":"ls"}`), Workspace: "/ws"}); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Bash through preparers without it: %v, want ErrUnknownTool", err)
	}
}
