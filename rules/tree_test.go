package rules

import (
	"testing"
	"time"

	"github.com/airlockhq/airlock/tool"
)

// A Tree requirement reads a directory and everything beneath it: a deny
// or ask rule about anything inside matches it, an allow rule must cover
// all of it. The Set finds the rules that start beneath the directory
// through its sorted index.
func TestTreeMatch(t *testing.T) {
	tree := func(target string) tool.Requirement {
		return tool.Requirement{Kind: tool.KindFilesystemRead, Target: target, Tool: "Grep", Tree: true}
	}
	tests := []struct {
		match  string
		r      tool.Requirement
		deny   bool // as a deny rule would match
		allows bool // as an allow rule would match
	}{
		{"Read(./.env)", tree("/ws"), true, false},
		{"Read(./.env)", tree("/ws/src"), false, false},
		{"Read(.env)", tree("/ws/src"), true, false}, // any depth
		{"Read(./secrets/**)", tree("/ws"), true, false},
		{"Read(./secrets/**)", tree("/ws/secrets"), true, true},
		{"Read(./secrets/**)", tree("/ws/secrets/a"), true, true},
		{"Read(./secrets/*)", tree("/ws/secrets"), true, false}, // not deeper files
		{"Read(./src/**/*.go)", tree("/ws/src"), true, false},
		{"Read(~/.ssh/**)", tree("/home/u"), true, false},
		{"Read(~/.ssh/**)", tree("/ws"), false, false},
		{"Read(//etc/**)", tree("/"), true, false},
		{"Read", tree("/"), true, true},
		// Without Tree the same read is only the directory itself.
		{"Read(./.env)", path(tool.KindFilesystemRead, "/ws"), false, false},
		{"Read(./secrets/**)", path(tool.KindFilesystemRead, "/ws/secrets"), true, true},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.match, testBase)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Matches(tt.r, true); got != tt.deny {
			t.Errorf("%s vs %s (tree %v) as deny: %v, want %v", tt.match, tt.r.Target, tt.r.Tree, got, tt.deny)
		}
		if got := p.Matches(tt.r, false); got != tt.allows {
			t.Errorf("%s vs %s (tree %v) as allow: %v, want %v", tt.match, tt.r.Target, tt.r.Tree, got, tt.allows)
		}
		// The index finds the same rules as the pattern.
		r, err := NewRule(Deny, tt.match, Workspace, testBase)
		if err != nil {
			t.Fatal(err)
		}
		if got := NewSet([]*Rule{r}).Match(Deny, tt.r, time.Now()) != nil; got != tt.deny {
			t.Errorf("%s vs %s: Set.Match %v, want %v", tt.match, tt.r.Target, got, tt.deny)
		}
	}
}

// Names are the other names a call gave the same file: deny and ask
// rules are checked against each, allow rules only where it leads.
func TestNamesMatchDenyNotAllow(t *testing.T) {
	r := tool.Requirement{Kind: tool.KindFilesystemRead, Target: "/ws/prod.env", Names: []string{"/ws/.env"}, Tool: "Read"}
	deny, _ := NewRule(Deny, "Read(./.env)", Workspace, testBase)
	allow, _ := NewRule(Allow, "Read(./.env)", Workspace, testBase)
	set := NewSet([]*Rule{deny, allow})
	if set.Match(Deny, r, time.Now()) == nil {
		t.Error("a deny rule for the link's name does not match")
	}
	if set.Match(Allow, r, time.Now()) != nil {
		t.Error("an allow rule for the link's name allows where it leads")
	}
}

// Hosts in rules are normalised like targets.
func TestHostRulesNormalised(t *testing.T) {
	for _, spec := range []string{"WebFetch(domain:EVIL.example.)", "WebFetch(domain:\uff45\uff56\uff49\uff4c.example)", "Net(evil\u3002example:443)"} {
		p, err := ParsePattern(spec, testBase)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Matches(tool.Requirement{Kind: tool.KindNetworkConnect, Target: "evil.example:443"}, true) {
			t.Errorf("%s does not match evil.example:443", spec)
		}
	}
	if _, err := ParsePattern("WebFetch(domain:a..b)", testBase); err == nil {
		t.Error("a host that fails normalisation is accepted in a rule")
	}
}
