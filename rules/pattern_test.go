package rules

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/tool"
)

var testBase = Base{Root: "/ws", Cwd: "/ws", Home: "/home/u"}

func cmd(target string) tool.Requirement {
	return tool.Requirement{Kind: tool.KindCommandExecute, Target: target, Tool: "Bash"}
}

func path(kind, target string) tool.Requirement {
	return tool.Requirement{Kind: kind, Target: target, Tool: "Read"}
}

func TestPatternMatch(t *testing.T) {
	hole := string(tool.Hole)
	dyn := func(target, shape string) tool.Requirement {
		r := cmd(target)
		r.Shape = shape
		return r
	}
	read, write := tool.KindFilesystemRead, tool.KindFilesystemWrite
	tests := []struct {
		rule  string
		req   tool.Requirement
		allow bool // strict match, as for allow rules
		deny  bool // conservative match, as for deny and ask rules
	}{
		{"Bash", cmd("anything at all"), true, true},
		{"Bash(*)", cmd("ls"), true, true},
		{"Bash(ls)", cmd("ls"), true, true},
		{"Bash(ls)", cmd("ls -la"), false, false},
		{"Bash(ls *)", cmd("ls"), true, true},
		{"Bash(ls *)", cmd("ls -la"), true, true},
		{"Bash(ls *)", cmd("lsof"), false, false},
		{"Bash(ls*)", cmd("lsof"), true, true},
		{"Bash(git log:*)", cmd("git log"), true, true},
		{"Bash(git log:*)", cmd("git log --oneline"), true, true},
		{"Bash(git log:*)", cmd("git logs"), false, false},
		{"Bash(npm run test *)", cmd("npm run test unit"), true, true},
		{"Bash(npm  run   test *)", cmd("npm run test unit"), true, true},
		{"Bash(git * main)", cmd("git push origin main"), true, true},
		{"Bash(* --help)", cmd("go --help"), true, true},
		{`Bash(echo \*)`, cmd("echo *"), true, true},
		{`Bash(echo \*)`, cmd("echo x"), false, false},
		{"Bash(git log *)", dyn("git $SUB", "git "+hole), false, true},
		{"Bash(git *)", dyn("git $SUB", "git "+hole), true, true},
		{"Bash(rm -rf *)", dyn("$CMD -rf /", hole+" -rf /"), false, true},
		{"Bash(git commit -m *)", cmd("git commit -m a  b"), true, true},
		{"Read", path(read, "/etc/passwd"), true, true},
		{"Read(./src/**)", path(read, "/ws/src/a/b.go"), true, true},
		{"Read(./src/**)", path(read, "/ws/srcx/a.go"), false, false},
		{"Read(./src)", path(read, "/ws/src/a/b.go"), true, true},
		{"Read(src/)", path(read, "/ws/src/a.go"), true, true},
		{"Read(./*.env)", path(read, "/ws/.env"), true, true},
		{"Read(./*.env)", path(read, "/ws/sub/.env"), false, false},
		{"Read(*.env)", path(read, "/ws/sub/prod.env"), true, true},
		{"Read(.env)", path(read, "/ws/.env"), true, true},
		{"Read(.env)", path(read, "/ws/a/b/.env"), true, true},
		{"Read(.env)", path(read, "/other/.env"), false, false},
		{"Read(~/.ssh/**)", path(read, "/home/u/.ssh/id_rsa"), true, true},
		{"Read(//etc/**)", path(read, "/etc/passwd"), true, true},
		{"Read(//etc/*)", path(read, "/etc/ssl/certs"), true, true}, // /etc/ssl is under /etc/*
		{"Read(/docs/**)", path(read, "/ws/docs/a.md"), true, true},
		{"Read(/docs/**)", path(read, "/docs/a.md"), false, false},
		{"Read(//**/id_rsa)", path(read, "/x/y/id_rsa"), true, true},
		{"Read(src/**/*.ts)", path(read, "/ws/src/a/b/c.ts"), true, true},
		{"Read(src/**/*.ts)", path(read, "/ws/src/c.ts"), true, true},
		{"Read(src/*.ts)", path(read, "/ws/src/a/c.ts"), false, false},
		{"Read(src/?.ts)", path(read, "/ws/src/a.ts"), true, true},
		{"Read(./.env)", path(write, "/ws/.env"), false, false},
		{"Edit(./.env)", path(write, "/ws/.env"), true, true},
		{"Write(./.env)", path(write, "/ws/.env"), true, true},
		{"Read(~/.ssh/**)", tool.Requirement{Kind: read, Target: "$HOME/.ssh/x", Shape: hole + "/.ssh/x", Unresolved: true}, false, true},
		{"Read(./src/**)", tool.Requirement{Kind: read, Target: "/ws/src/*.go", Shape: "/ws/src/" + hole + ".go"}, true, true},
		{"Read(./src/*.go)", tool.Requirement{Kind: read, Target: "/ws/src/*.go", Shape: "/ws/src/" + hole + ".go"}, true, true},
		{"Read(./src/a.go)", tool.Requirement{Kind: read, Target: "/ws/src/*.go", Shape: "/ws/src/" + hole + ".go"}, false, true},
		{"Grep", tool.Requirement{Kind: read, Target: "/ws", Tool: "Grep"}, true, true},
		{"Grep", tool.Requirement{Kind: read, Target: "/ws", Tool: "Read"}, false, false},
		{"WebFetch(domain:example.com)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:443"}, true, true},
		{"WebFetch(domain:example.com)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "api.example.com:443"}, false, false},
		{"WebFetch(domain:*.example.com)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "api.example.com:443"}, true, true},
		{"Net(example.com:443)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:443"}, true, true},
		{"Net(example.com:443)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:80"}, false, false},
		{"Net(Example.com)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:8080"}, true, true},
		{"Net(*.example.com:443)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "example.com:443"}, false, false},
		{"Net([::1]:22)", tool.Requirement{Kind: tool.KindNetworkConnect, Target: "[::1]:22"}, true, true},
		{"mcp__github", tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__github__create_issue"}, true, true},
		{"mcp__github", tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__githubx__create_issue"}, false, false},
		{"mcp__github__*", tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__github__x"}, true, true},
		{"mcp__github__create_issue", tool.Requirement{Kind: tool.KindToolInvoke, Target: "mcp__github__create_issue"}, true, true},
		{"WebSearch", tool.Requirement{Kind: tool.KindToolInvoke, Target: "WebSearch"}, true, true},
		{"Bash", tool.Requirement{Kind: tool.KindCommandExecute, Target: "echo 'x", Unparsed: true}, false, true},
		{"Bash(rm -rf *)", tool.Requirement{Kind: tool.KindCommandExecute, Target: "rm -rf / 'x", Unparsed: true}, false, true},
		{"Read", tool.Requirement{Kind: read, Target: "$PWD/x", Shape: hole + "/x", Unresolved: true}, false, true},
	}
	for _, tt := range tests {
		p, err := ParsePattern(tt.rule, testBase)
		if err != nil {
			t.Errorf("%s: %v", tt.rule, err)
			continue
		}
		r := tt.req
		if got := p.Matches(r, false); got != tt.allow {
			t.Errorf("%s vs %v: strict match %v, want %v", tt.rule, tt.req, got, tt.allow)
		}
		if got := p.Matches(r, true); got != tt.deny {
			t.Errorf("%s vs %v: conservative match %v, want %v", tt.rule, tt.req, got, tt.deny)
		}
	}
}

func TestParsePatternErrors(t *testing.T) {
	for _, text := range []string{
		"", "Bash(", "Bash()", "Bash(ls", "Ba sh(ls)", "WebFetch(https://x.com)", "WebFetch(domain:)",
		"Net(*)x", "Net(a b)", "WebSearch(query)", "mcp__x(y)", "Read(/x)\x00",
	} {
		if _, err := ParsePattern(text, testBase); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParsePattern(%q): err %v, want ErrSyntax", text, err)
		}
	}
	if _, err := ParsePattern("Read(/x)", Base{Cwd: "/ws"}); err == nil || !strings.Contains(err.Error(), "//path") {
		t.Errorf("a /path rule with no root should say to write //path, got %v", err)
	}
}

func TestSetPrefersStrongestLayer(t *testing.T) {
	mk := func(layer Layer, match string) *Rule {
		r, err := NewRule(Deny, match, layer, testBase)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	s := NewSet([]*Rule{mk(Local, "Bash(git *)"), mk(User, "Bash(*)"), mk(Managed, "Bash(git push)")})
	got := s.Match(Deny, cmd("git push"), time.Now())
	if got == nil || got.Layer != Managed {
		t.Fatalf("got %v, want the managed rule", got)
	}
	if got := s.Match(Deny, cmd("git pull"), time.Now()); got == nil || got.Layer != User {
		t.Fatalf("got %v, want the user rule", got)
	}
}

// FuzzParsePattern: parsing never panics, and a pattern that parses
// matches requirements without panicking in both modes.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"Bash(git log:*)", "Read(./src/**)", "Edit(//etc/**)", "WebFetch(domain:x.com)",
		"mcp__s__t", "Net(*.example.com:443)", `Bash(a\*b *)`, "Read(~/x/**/y?z)", "Bash(* * *)"} {
		f.Add(s, "git log --oneline")
	}
	f.Fuzz(func(t *testing.T, text, target string) {
		p, err := ParsePattern(text, testBase)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			return
		}
		for _, kind := range []string{p.Kind, tool.KindCommandExecute} {
			r := tool.Requirement{Kind: kind, Target: target, Shape: target + string(tool.Hole)}
			p.Matches(r, false)
			p.Matches(r, true)
			r.Shape = ""
			if p.Matches(r, false) && !p.Matches(r, true) {
				t.Fatalf("%q matches %q strictly but not conservatively", text, target)
			}
		}
	})
}
