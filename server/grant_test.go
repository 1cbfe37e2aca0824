package server

import (
	"errors"
	"os"
	"testing"

	"github.com/airlockhq/airlock/grant"
)

func TestGrantsAreSingleUse(t *testing.T) {
	r := newRig(t)
	if err := os.MkdirAll(r.ws+"/.airlock", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.ws+"/.airlock/policy.toml", []byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(make test)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := r.decide(r.bash("make test", "execution_id", "ex-1"))
	if d.Decision != "allow" || d.Grant == "" || len(d.Grants) != 1 {
		t.Fatalf("decide with an execution: %+v", d)
	}
	if d := r.decide(r.bash("make test")); d.Grant != "" {
		t.Fatalf("a grant without an execution: %+v", d)
	}
	if _, err := r.srv.Issuer().Redeem(grantToken(d.Grant), grantBinding(r, "make test", "ex-1")); err != nil {
		t.Fatalf("redeem: %v", err)
	}
	if _, err := r.srv.Issuer().Redeem(grantToken(d.Grant), grantBinding(r, "make test", "ex-1")); err == nil {
		t.Fatal("a grant was redeemed twice")
	}
}

func grantToken(s string) grant.Token { return grant.Token(s) }

func grantBinding(r *rig, command, exec string) grant.Binding {
	return grant.Binding{ExecutionID: exec, Command: command, Dir: r.ws, Kind: "command.execute", Target: command}
}

// TestGrantReplayOnAnotherReplica: a second daemon on the same database
// shares the grant key and refuses a grant the first one redeemed.
func TestGrantReplayOnAnotherReplica(t *testing.T) {
	r := newRig(t)
	if err := os.MkdirAll(r.ws+"/.airlock", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.ws+"/.airlock/policy.toml", []byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(make test)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := r.decide(r.bash("make test", "execution_id", "ex-2"))
	other, err := New(Config{Store: r.st, Policy: r.srv.cfg.Policy})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := r.srv.Issuer().Redeem(grantToken(d.Grant), grantBinding(r, "make test", "ex-2")); err != nil {
		t.Fatalf("redeem on the first: %v", err)
	}
	if _, err := other.Issuer().Redeem(grantToken(d.Grant), grantBinding(r, "make test", "ex-2")); !errors.Is(err, grant.ErrReplayed) {
		t.Fatalf("replay on the second: %v", err)
	}
}
