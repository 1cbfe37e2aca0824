package rules

import (
	"strings"
	"testing"
	"time"
)

// TestFindingsToolNames: a rule naming a Claude Code tool that is decided
// by its name fires; one naming a tool airlock does not know, or one
// decided by what it touches, is reported.
func TestFindingsToolNames(t *testing.T) {
	tests := []struct {
		effect Effect
		match  string
		want   string // the finding's detail, "" for none
	}{
		{Deny, "Agent", ""},
		{Ask, "AskUserQuestion", ""},
		{Allow, "EnterWorktree", ""},
		{Allow, "TodoWrite", ""},
		{Allow, "WebSearch", ""},
		{Allow, "mcp__github__create_issue", ""},
		{Deny, "Agnet", "airlock knows no tool named Agnet"},
		{Allow, "ReadMcpResourceTool", "decided by what they touch"},
	}
	for _, tt := range tests {
		r, err := NewRule(tt.effect, tt.match, Workspace, Base{Root: "/ws", Cwd: "/ws", Home: "/home/u"})
		if err != nil {
			t.Fatalf("%s: %v", tt.match, err)
		}
		fs := NewSet([]*Rule{r}).Findings(time.Now())
		switch {
		case tt.want == "" && len(fs) != 0:
			t.Errorf("%s %s: finding %s: %s", tt.effect, tt.match, fs[0].Problem, fs[0].Detail)
		case tt.want != "" && (len(fs) != 1 || fs[0].Problem != "unmatchable" || !strings.Contains(fs[0].Detail, tt.want)):
			t.Errorf("%s %s: findings %+v, want unmatchable saying %q", tt.effect, tt.match, fs, tt.want)
		}
	}
}
