package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/audit"
)

// mcp serve's run_command gets the refusal hints airlock run gives: a
// connect with the network off says why in the output, and the outcome
// and the audit log carry the record.
func TestServeRefusalHints(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	ws := workspace(t)
	policy(t, ws, "[[rule]]\neffect = \"allow\"\nmatch  = \"Bash(python3 *)\"\n")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cs := connectStdio(t, nil, serveArgs(ws, "--audit", log)...)
	o := structured(t, call(t, cs, "run_command", map[string]any{"command": `python3 -c "import socket; socket.create_connection(('192.0.2.1', 80))"`}))
	if !strings.Contains(o.Output, "Network is unreachable\nairlock: a connection failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n") {
		t.Errorf("run_command's output has no hint: %q", o.Output)
	}
	found := false
	for _, d := range o.Denials {
		found = found || d.Source == "sandbox" && strings.Contains(d.Reason, "network is unreachable")
	}
	if !found {
		t.Errorf("the outcome has no network denial: %+v", o.Denials)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	logged := false
	if err := audit.Read(f, func(e audit.Event) error {
		logged = logged || e.Type == audit.TypeEnforcement && strings.Contains(e.Reason, "network is unreachable")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !logged {
		t.Error("the audit log has no enforcement event for the refused connection")
	}
}
