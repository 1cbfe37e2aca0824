package claudecode_test

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/integrations/claudecode"
	"github.com/airlockhq/airlock/internal/claudetypes"
	"github.com/airlockhq/airlock/tool"
)

// loadTypes returns the Agent SDK types pinned in testdata/sdk; without
// them (no npm ci) the test skips, except in CI.
func loadTypes(t *testing.T) *claudetypes.Types {
	t.Helper()
	types, err := claudetypes.Load(".")
	if errors.Is(err, claudetypes.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return types
}

// noPublishedInput are the tools airlock reads fields of that the pinned
// sdk-tools.d.ts has no input type for, and why that is fine.
var noPublishedInput = map[string]string{
	"MultiEdit":    "an earlier release's tool; Edit replaced it",
	"LS":           "an earlier release's tool; Glob replaced it",
	"NotebookRead": "an earlier release's tool; Read reads notebooks",
	"PowerShell":   "listed in BUILTIN_TOOL_NAMES but its input is not published; airlock reads only command",
}

// TestToolsMatchPublishedTypes fails when the pinned Claude Agent SDK
// defines a tool airlock has no entry for, when a field the gate reads
// is not in the tool's published input type or has another JSON type
// there, or when the hook's own input or modes drift from the SDK's.
// Updating the pin (package.json, package-lock.json) re-runs it against
// the new release.
func TestToolsMatchPublishedTypes(t *testing.T) {
	types := loadTypes(t)
	t.Logf("@anthropic-ai/claude-agent-sdk %s: %d tools, %d input types", types.Version, len(types.ToolNames), len(types.Inputs))
	for _, name := range types.ToolNames {
		if tool.ClaudeCode(name).Class == tool.ClassUnknown {
			t.Errorf("the SDK defines tool %q, which tool/claudeclass.go does not classify: decide what it does and add it", name)
		}
	}
	for toolName, fields := range tool.InputFields() {
		iface, ok := types.InputOf(toolName)
		if !ok {
			if why, known := noPublishedInput[toolName]; known {
				t.Logf("%s: no published input type (%s)", toolName, why)
				continue
			}
			t.Errorf("the gate reads fields of %s, which has no published input type", toolName)
			continue
		}
		for _, f := range fields {
			name, kind := f[:strings.LastIndexByte(f, ':')], f[len(f)-1]
			pub, ok := iface.Field(name)
			switch {
			case !ok:
				t.Errorf("the gate reads %s.%s, which %s does not have", toolName, name, iface.Name)
			case pub.Kind != kind:
				t.Errorf("the gate wants %s.%s of JSON type %c; %s declares %c", toolName, name, kind, iface.Name, pub.Kind)
			}
		}
	}
	// Every published input type belongs to a tool airlock knows (that
	// every gated tool has a preparer is package tool's own test).
	known := tool.ClaudeCodeTools()
	for iname := range types.Inputs {
		base := strings.TrimSuffix(iname, "Input")
		candidates := []string{base, strings.TrimPrefix(base, "File"), base + "Tool"}
		if !slices.ContainsFunc(candidates, func(c string) bool { return slices.Contains(known, c) }) && iname != "McpInput" {
			t.Logf("input type %s belongs to no tool name airlock knows (a tool not in BUILTIN_TOOL_NAMES goes to a person)", iname)
		}
	}

	// The hook's stdin: each field ParseInput reads is published.
	pre := map[string]claudetypes.Field{}
	for _, f := range types.PreToolUseFields {
		pre[f.Name] = f
	}
	for _, f := range []string{"session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "tool_name", "tool_input", "tool_use_id"} {
		if _, ok := pre[f]; !ok {
			t.Errorf("the hook reads %q, which PreToolUseHookInput does not have", f)
		}
	}
	// Every permission mode is one mode.go weighs.
	for _, m := range types.PermissionModes {
		if !slices.Contains([]string{claudecode.ModeDefault, claudecode.ModeAcceptEdits, claudecode.ModePlan,
			claudecode.ModeDontAsk, claudecode.ModeBypass, claudecode.ModeAuto}, m) {
			t.Errorf("permission mode %q is new: weigh it in mode.go (until then it is treated like plan)", m)
		}
	}
	for _, d := range []claudecode.Verdict{claudecode.VerdictAllow, claudecode.VerdictAsk, claudecode.VerdictDeny} {
		if !slices.Contains(types.HookDecisions, string(d)) {
			t.Errorf("the hook answers %q, which HookPermissionDecision does not have", d)
		}
	}
}

// The entry "airlock init claude-code" writes uses only members that the
// published settings type gives a command hook, with values it allows:
// the exec form (args) and onFailure "block".
func TestHookEntryMatchesPublishedSettings(t *testing.T) {
	types := loadTypes(t)
	published := map[string]claudetypes.Field{}
	for _, f := range types.CommandHookFields {
		published[f.Name] = f
	}
	out, _, err := claudecode.RegisterHook(nil, claudecode.AirlockHook("/usr/local/bin/airlock", true))
	if err != nil {
		t.Fatal(err)
	}
	for name, e := range airlockEntries(t, out)[0] {
		if name == "matcher" {
			continue // the group's, added by airlockEntries
		}
		f, ok := published[name]
		if !ok {
			t.Errorf("the hook entry has %q, which a published command hook does not", name)
			continue
		}
		if s, isString := e.(string); isString && len(f.Literals) > 0 && !slices.Contains(f.Literals, s) {
			t.Errorf("the hook entry's %s is %q; the published type allows %v", name, s, f.Literals)
		}
		if _, isArray := e.([]any); isArray && f.Kind != 'a' {
			t.Errorf("the hook entry's %s is an array; the published type is %c", name, f.Kind)
		}
	}
	if f := published["onFailure"]; !slices.Contains(f.Literals, "block") {
		t.Errorf("onFailure allows %v, not block", f.Literals)
	}
}
