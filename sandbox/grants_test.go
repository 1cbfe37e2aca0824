package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// TestGrantHandOver runs the gate and the executor together: a grant the
// gate minted for one Bash call runs exactly that call once, and nothing
// else gets through the executor, whatever the gate hands it.
func TestGrantHandOver(t *testing.T) {
	ws := t.TempDir()
	spec := profile.Preset("workspace")
	spec.Workspace = ws
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ws = p.Workspace()
	issuer := grant.NewRandomIssuer()
	ex, err := sandbox.NewWithOptions(p, sandbox.Options{Grants: issuer})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	allow, err := rules.NewRule(rules.Allow, "Bash(echo *)", rules.Workspace, rules.Base{Root: ws})
	if err != nil {
		t.Fatal(err)
	}
	ev := &gate.Evaluator{Profile: p, Rules: rules.NewSet([]*rules.Rule{allow}), Issuer: issuer}
	script := "echo granted"
	input, _ := json.Marshal(map[string]string{"command": script})
	d, err := ev.Decide(context.Background(), tool.Call{Tool: "Bash", Input: input, Workspace: ws, ExecutionID: "exec-7"})
	if err != nil || d.Effect != rules.Allow || len(d.Grants) != 1 {
		t.Fatalf("gate: %+v %v", d, err)
	}
	cmd := sandbox.Cmd{Args: []string{"sh", "-c", script}, ExecutionID: "exec-7", Grants: d.Grants}

	res, err := ex.Run(context.Background(), cmd)
	if err != nil || string(res.Stdout) != "granted\n" {
		t.Fatalf("granted run: %v %+v", err, res)
	}

	forged, err := issuer.Issue(grant.Binding{ExecutionID: "exec-8", Command: "cat /etc/shadow", Dir: ws,
		Profile: p.Fingerprint(), Kind: profile.KindFilesystemRead, Target: "/etc/shadow"}, 60e9)
	if err != nil {
		t.Fatal(err)
	}
	other := grant.NewRandomIssuer()
	stranger, _ := other.Issue(grant.Binding{ExecutionID: "exec-7", Command: script, Dir: ws,
		Profile: p.Fingerprint(), Kind: profile.KindCommandExecute, Target: script}, 60e9)

	tests := []struct {
		name string
		cmd  sandbox.Cmd
		want error
	}{
		{"replay", cmd, grant.ErrReplayed},
		{"no grant", sandbox.Cmd{Args: []string{"sh", "-c", script}, ExecutionID: "exec-7"}, sandbox.ErrNotGranted},
		{"another command", sandbox.Cmd{Args: []string{"sh", "-c", "echo other"}, ExecutionID: "exec-7", Grants: d.Grants}, grant.ErrWrongCommand},
		{"another directory", sandbox.Cmd{Args: []string{"sh", "-c", script}, Dir: "/tmp", ExecutionID: "exec-7", Grants: d.Grants}, grant.ErrWrongDir},
		{"another execution", sandbox.Cmd{Args: []string{"sh", "-c", script}, ExecutionID: "exec-9", Grants: d.Grants}, grant.ErrWrongExecution},
		{"another issuer", sandbox.Cmd{Args: []string{"sh", "-c", script}, ExecutionID: "exec-7",
			Grants: []grant.Claim{{Kind: profile.KindCommandExecute, Target: script, Token: stranger}}}, grant.ErrTampered},
		{"profile denies what a buggy gate granted", sandbox.Cmd{Args: []string{"sh", "-c", "cat /etc/shadow"}, ExecutionID: "exec-8",
			Grants: []grant.Claim{{Kind: profile.KindFilesystemRead, Target: "/etc/shadow", Token: forged}}}, sandbox.ErrNotGranted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ex.Prepare(context.Background(), tt.cmd)
			var ge *sandbox.GrantError
			if !errors.Is(err, tt.want) || !errors.Is(err, sandbox.ErrNotGranted) || !errors.As(err, &ge) {
				t.Fatalf("err = %v; want %v", err, tt.want)
			}
		})
	}
}
