package claudecode

import (
	"testing"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// TestModeVerdict is the table of mode × tool × how the gate allowed it.
// Its rule: an allow only where Claude Code alone would run the call
// unasked; a deny always.
func TestModeVerdict(t *testing.T) {
	const ws = "/ws"
	read := tool.Requirement{Kind: tool.KindFilesystemRead, Target: "/ws/a"}
	readOut := tool.Requirement{Kind: tool.KindFilesystemRead, Target: "/usr/include/a.h"}
	write := tool.Requirement{Kind: tool.KindFilesystemWrite, Target: "/ws/a"}
	writeOut := tool.Requirement{Kind: tool.KindFilesystemWrite, Target: "/tmp/a"}
	cmd := tool.Requirement{Kind: tool.KindCommandExecute, Target: "make"}
	byProfile := func(rs ...tool.Requirement) gate.Decision {
		d := gate.Decision{Effect: rules.Allow}
		for _, r := range rs {
			d.Requirements = append(d.Requirements, gate.Step{Requirement: r, Effect: rules.Allow, Layer: gate.LayerProfile})
		}
		return d
	}
	byRule := func(r tool.Requirement) gate.Decision {
		return gate.Decision{Effect: rules.Allow, Requirements: []gate.Step{{Requirement: r, Effect: rules.Allow, Layer: "workspace", Rule: "X"}}}
	}
	deny := gate.Decision{Effect: rules.Deny, Reason: "no"}
	askNoRule := gate.Decision{Effect: rules.Ask}
	askRule := gate.Decision{Effect: rules.Ask, Rule: "Agent"}
	modes := []string{"", ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass, ModeAuto, "futureMode"}
	tests := []struct {
		name string
		tool string
		d    gate.Decision
		// want per mode, in the order of modes
		want [8]Verdict
	}{
		{"a read inside, by the profile", "Read", byProfile(read),
			[8]Verdict{"allow", "allow", "allow", "allow", "allow", "allow", "allow", "allow"}},
		{"a read outside, by the profile", "Read", byProfile(readOut),
			[8]Verdict{"defer", "defer", "defer", "defer", "defer", "allow", "defer", "defer"}},
		{"an edit inside, by the profile", "Edit", byProfile(write),
			[8]Verdict{"defer", "defer", "allow", "defer", "defer", "allow", "defer", "defer"}},
		{"an edit outside, by the profile", "Write", byProfile(writeOut),
			[8]Verdict{"defer", "defer", "defer", "defer", "defer", "allow", "defer", "defer"}},
		{"an edit, by a rule", "Edit", byRule(write),
			[8]Verdict{"allow", "allow", "allow", "defer", "allow", "allow", "allow", "defer"}},
		{"a command, by the profile", "Bash", byProfile(cmd),
			[8]Verdict{"defer", "defer", "defer", "defer", "defer", "allow", "defer", "defer"}},
		{"a command, by a rule", "Bash", byRule(cmd),
			[8]Verdict{"allow", "allow", "allow", "defer", "allow", "allow", "allow", "defer"}},
		{"a denial", "Bash", deny,
			[8]Verdict{"deny", "deny", "deny", "deny", "deny", "deny", "deny", "deny"}},
		{"orchestration, no rule", "Agent", askNoRule,
			[8]Verdict{"defer", "defer", "defer", "defer", "defer", "defer", "defer", "defer"}},
		{"orchestration, an ask rule", "Agent", askRule,
			[8]Verdict{"ask", "ask", "ask", "ask", "ask", "ask", "ask", "ask"}},
		{"orchestration, an allow rule", "Agent", byRule(tool.Requirement{Kind: tool.KindToolInvoke, Target: "Agent"}),
			[8]Verdict{"allow", "allow", "allow", "allow", "allow", "allow", "allow", "allow"}},
		{"an unknown tool, no rule", "Frobnicate", askNoRule,
			[8]Verdict{"ask", "ask", "ask", "ask", "ask", "ask", "ask", "ask"}},
		{"an unknown tool, an allow rule", "Frobnicate", byRule(tool.Requirement{Kind: tool.KindToolInvoke, Target: "Frobnicate"}),
			[8]Verdict{"ask", "ask", "ask", "ask", "ask", "ask", "ask", "ask"}},
		{"an opaque tool, no rule", "EnterWorktree", askNoRule,
			[8]Verdict{"ask", "ask", "ask", "ask", "ask", "ask", "ask", "ask"}},
	}
	for _, tt := range tests {
		for i, mode := range modes {
			got, reason := modeVerdict(mode, ws, tool.ClaudeCode(tt.tool), tt.d, nil, false)
			if got != tt.want[i] {
				t.Errorf("%s in mode %q: %s (%s), want %s", tt.name, mode, got, reason, tt.want[i])
			}
		}
	}
	// A sandboxed command (sandbox mode's rewrite) that the profile allows
	// runs unasked where Claude Code's own sandbox mode runs sandboxed
	// commands unasked; plan, dontAsk, auto and unknown modes still defer,
	// and a denial still holds.
	confined := []struct {
		name string
		d    gate.Decision
		want [8]Verdict
	}{
		{"a sandboxed command, by the profile", byProfile(cmd),
			[8]Verdict{"allow", "allow", "allow", "defer", "defer", "allow", "defer", "defer"}},
		{"a sandboxed command that writes, by the profile", byProfile(cmd, write),
			[8]Verdict{"allow", "allow", "allow", "defer", "defer", "allow", "defer", "defer"}},
		{"a sandboxed denial", deny,
			[8]Verdict{"deny", "deny", "deny", "deny", "deny", "deny", "deny", "deny"}},
	}
	for _, tt := range confined {
		for i, mode := range modes {
			got, reason := modeVerdict(mode, ws, tool.ClaudeCode("Bash"), tt.d, nil, true)
			if got != tt.want[i] {
				t.Errorf("%s in mode %q: %s (%s), want %s", tt.name, mode, got, reason, tt.want[i])
			}
		}
	}
	// A requirement the profile allows that an allow rule also matches
	// counts as allowed by the rule.
	got, _ := modeVerdict(ModeDefault, ws, tool.ClaudeCode("Edit"), byProfile(write), func(tool.Requirement) bool { return true }, false)
	if got != VerdictAllow {
		t.Errorf("an edit a rule also allows: %s, want allow", got)
	}
}
