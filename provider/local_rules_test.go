package provider_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

// The local provider takes its profile from workspace.Load: the user's
// deny rules are compiled into every scratch workspace's sandbox, so
// python's subprocess cannot run a program a Bash rule denies. The
// positive control is the same request with no rules.
func TestLocalEnforcesUserRules(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 on this host")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	home := filepath.Join(tmp, "home")
	t.Setenv("HOME", home)
	rulesFile := filepath.Join(home, ".config", "airlock", "policy.toml")
	if err := os.MkdirAll(filepath.Dir(rulesFile), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := provider.ParseCatalog("c.toml", []byte("[sandbox.box]\nprovider = \"local\"\n"), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.Operator(provider.Identity{}).Sandbox("box")
	if err != nil {
		t.Fatal(err)
	}
	req := provider.Request{Code: `
import subprocess
open("victim.txt", "w").write("x")
try:
    subprocess.run(["rm", "victim.txt"])
except OSError as e:
    print("rm refused:", e)
import os
print("removed" if not os.path.exists("victim.txt") else "kept")
`}
	run := func() string {
		t.Helper()
		res, err := h.Execute(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Stdout + res.Stderr
	}
	if out := run(); !strings.Contains(out, "removed") {
		t.Fatalf("control: without a rule rm did not run: %q", out)
	}
	if err := os.WriteFile(rulesFile, []byte("[[rule]]\neffect = \"deny\"\nmatch = \"Bash(rm:*)\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := run(); !strings.Contains(out, "kept") {
		t.Errorf("with the user's deny Bash(rm:*), rm ran: %q", out)
	}
}
