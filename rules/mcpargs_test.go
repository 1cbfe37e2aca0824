package rules

import (
	"errors"
	"testing"
	"time"

	"github.com/airlockhq/airlock/tool"
)

func TestMCPArgumentPatterns(t *testing.T) {
	call := func(name, args string) tool.Requirement {
		return tool.Requirement{Kind: tool.KindToolInvoke, Target: name, Tool: name, Args: args}
	}
	const w = "mcp__fs__write_file"
	tests := []struct {
		rule  string
		req   tool.Requirement
		allow bool // strict, as for allow rules
		deny  bool // conservative, as for deny and ask rules
	}{
		{w + "(path:/tmp/*)", call(w, `{"path":"/tmp/a/b.txt","content":"x"}`), true, true},
		{w + "(path:/tmp/*)", call(w, `{"path":"/etc/passwd"}`), false, false},
		{w + "(path:*.secret)", call(w, `{"path":"/ws/x.secret"}`), true, true},
		{w + "(path:/tmp/*)", call(w, `{"content":"no path"}`), false, false},
		{w + "(path:/tmp/*)", call(w, `not json`), false, false},
		{w + "(path:/tmp/*)", call("mcp__fs__read_file", `{"path":"/tmp/x"}`), false, false},
		{w + "(path:/tmp/*)", call("mcp__other__write_file", `{"path":"/tmp/x"}`), false, false},
		// Arrays: allow needs every element, deny one.
		{"mcp__fs__read_multiple_files(paths:/tmp/*)", call("mcp__fs__read_multiple_files", `{"paths":["/tmp/a","/tmp/b"]}`), true, true},
		{"mcp__fs__read_multiple_files(paths:/tmp/*)", call("mcp__fs__read_multiple_files", `{"paths":["/tmp/a","/etc/shadow"]}`), false, true},
		{"mcp__fs__read_multiple_files(paths:/tmp/*)", call("mcp__fs__read_multiple_files", `{"paths":[]}`), false, false},
		// Numbers and booleans as their JSON text.
		{"mcp__db__query(limit:10)", call("mcp__db__query", `{"limit":10}`), true, true},
		{"mcp__db__query(dry_run:true)", call("mcp__db__query", `{"dry_run":false}`), false, false},
		// A Hole in the arguments is literal text, never a wildcard.
		{w + "(path:/tmp/x)", call(w, `{"path":"/tmp/\uffff"}`), false, false},
		// Without a pattern, every call of the tool.
		{w, call(w, `{"path":"/etc/passwd"}`), true, true},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.rule, testBase)
		if err != nil {
			t.Errorf("%s: %v", tt.rule, err)
			continue
		}
		if got := p.Matches(tt.req, false); got != tt.allow {
			t.Errorf("%s on %s %s: allow match %v, want %v", tt.rule, tt.req.Target, tt.req.Args, got, tt.allow)
		}
		if got := p.Matches(tt.req, true); got != tt.deny {
			t.Errorf("%s on %s %s: deny match %v, want %v", tt.rule, tt.req.Target, tt.req.Args, got, tt.deny)
		}
	}
	for _, bad := range []string{"mcp__fs(path:/x)", "mcp__fs__*(path:/x)", w + "(path)", w + "(:/x)", w + "(path:)", w + "(pa th:/x)", "WebSearch(q:x)"} {
		if _, err := ParsePattern(bad, testBase); !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: %v, want a syntax error", bad, err)
		}
	}
}

// In a Set, an argument-pattern deny beats a whole-tool allow only for the
// calls it matches, and lint does not call the allow shadowed.
func TestMCPArgumentPatternsInSet(t *testing.T) {
	mk := func(effect Effect, match string) *Rule {
		r, err := NewRule(effect, match, Workspace, testBase)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	testNow := time.Now()
	set := NewSet([]*Rule{mk(Allow, "mcp__fs"), mk(Deny, "mcp__fs__write_file(path:/etc/*)")})
	req := func(args string) tool.Requirement {
		return tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__fs__write_file", Args: args}
	}
	if set.Match(Deny, req(`{"path":"/etc/passwd"}`), testNow) == nil {
		t.Error("the deny did not match a write to /etc")
	}
	if set.Match(Deny, req(`{"path":"/ws/x"}`), testNow) != nil || set.Match(Allow, req(`{"path":"/ws/x"}`), testNow) == nil {
		t.Error("a write to /ws is not left to the allow")
	}
	for _, f := range set.Findings(testNow) {
		t.Errorf("finding: %s %s: %s", f.Rule.Match, f.Problem, f.Detail)
	}
}
