package approval

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

func call(ws, command string) tool.Call {
	in, _ := json.Marshal(map[string]string{"command": command})
	return tool.Call{Tool: "Bash", Input: in, Workspace: ws, Home: "/home/u"}
}

// terminal runs one prompt with the given typed input and returns the
// decision and what was shown.
func terminal(t *testing.T, e *gate.Evaluator, typed, command string) (gate.Decision, string) {
	t.Helper()
	var out strings.Builder
	e.Approver = &Terminal{In: strings.NewReader(typed), Out: &out}
	d, err := e.Decide(context.Background(), call("/ws", command))
	if err != nil {
		t.Fatalf("%q: %v", typed, err)
	}
	return d, out.String()
}

func TestTerminalAnswers(t *testing.T) {
	tests := []struct {
		typed    string
		effect   rules.Effect
		approval string
	}{
		{"y\n", rules.Allow, "once"},
		{"maybe\nn\n", rules.Deny, "deny"},
		{"", rules.Deny, "deny"}, // end of input
		{"x\nx\nx\ny\n", rules.Deny, "deny"},
	}
	for _, tt := range tests {
		d, shown := terminal(t, &gate.Evaluator{}, tt.typed, "git push")
		if d.Effect != tt.effect || d.Approval != tt.approval {
			t.Errorf("%q: %s %q, want %s %q", tt.typed, d.Effect, d.Approval, tt.effect, tt.approval)
		}
		if !strings.Contains(shown, "command.execute git push") || !strings.Contains(shown, `"always" saves: Bash(git push)`) {
			t.Errorf("prompt does not show the requirement and the rule it would save:\n%s", shown)
		}
	}
}

func TestTerminalAlwaysWritesLocalRules(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	w := &rules.Writer{Path: rules.LocalPath(ws)}
	e := &gate.Evaluator{Remember: w}
	var out strings.Builder
	e.Approver = &Terminal{In: strings.NewReader("a\n"), Out: &out}
	if d, err := e.Decide(context.Background(), call(ws, "make && make install")); err != nil || d.Effect != rules.Allow {
		t.Fatalf("%+v %v", d, err)
	}
	e.Approver = &Terminal{In: strings.NewReader("h\n"), Out: &out, While: 2 * time.Hour}
	if d, _ := e.Decide(context.Background(), call(ws, "npm test")); d.Approval != "for 2h0m0s" {
		t.Fatalf("approval %q", d.Approval)
	}
	e.Approver = &Terminal{In: strings.NewReader("d\n"), Out: &out}
	if d, _ := e.Decide(context.Background(), call(ws, "curl x")); d.Effect != rules.Deny {
		t.Fatalf("always deny: %s", d.Effect)
	}
	set, err := rules.Load(rules.Sources{Workspace: ws, Managed: "-", User: "-", NoClaude: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range set.Rules() {
		s := string(r.Effect) + " " + r.Match
		if !r.Expires.IsZero() {
			s += " (expires)"
		}
		got = append(got, s)
	}
	want := "allow Bash(make),allow Bash(make install),allow Bash(npm test) (expires),deny Bash(curl x)"
	if strings.Join(got, ",") != want {
		t.Errorf("local rules %v, want %s", got, want)
	}
}

func TestTerminalCancelled(t *testing.T) {
	r, w := io.Pipe() // nothing is ever typed
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	e := &gate.Evaluator{Approver: &Terminal{In: r, Out: io.Discard}}
	d, err := e.Decide(ctx, call("/ws", "make"))
	if err != nil || d.Effect != rules.Deny {
		t.Fatalf("%+v %v", d, err)
	}
}

func TestHeadless(t *testing.T) {
	e := &gate.Evaluator{Approver: Headless{}}
	d, err := e.Decide(context.Background(), call("/ws", "make"))
	if !errors.Is(err, gate.ErrApprovalRequired) || d.Effect != rules.Deny {
		t.Fatalf("%+v %v", d, err)
	}
	if !strings.Contains(err.Error(), "command.execute make") {
		t.Errorf("error does not name the requirement: %v", err)
	}
}

func TestFunc(t *testing.T) {
	var seen []string
	e := &gate.Evaluator{Approver: Func(func(_ context.Context, req gate.Request) (gate.Answer, error) {
		for _, p := range req.Pending {
			seen = append(seen, p.Requirement.Target)
		}
		return gate.Answer{Verdict: gate.ApproveOnce}, nil
	})}
	d, err := e.Decide(context.Background(), call("/ws", "a | b"))
	if err != nil || d.Effect != rules.Allow || strings.Join(seen, ",") != "a,b" {
		t.Fatalf("%+v %v %v", d, err, seen)
	}
}
