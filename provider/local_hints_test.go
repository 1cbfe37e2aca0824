package provider_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/provider"
)

// The local provider's runs get the sandbox's refusal hints: a program
// whose connect fails with the network off finds, in its stderr, the
// line that says why; a run that makes none finds no such line.
func TestLocalRefusalHints(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	t.Setenv("TMPDIR", t.TempDir())
	c, err := provider.ParseCatalog("h.toml", []byte("[sandbox.box]\nprovider = \"local\"\n"), provider.LocalDriver())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.Operator(provider.Identity{}).Sandbox("box")
	if err != nil {
		t.Fatal(err)
	}
	const line = "airlock: a connection failed: the network is off in this sandbox (--net none); allow the hosts the command needs with --net HOST,...\n"
	res, err := h.Execute(context.Background(), provider.Request{Lang: "python", Code: "import socket\nsocket.create_connection(('192.0.2.1', 80))\n"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stderr, "Network is unreachable\n"+line) {
		t.Errorf("stderr has no hint after the refused connect: %q", res.Stderr)
	}
	res, err = h.Execute(context.Background(), provider.Request{Lang: "python", Code: "print('quiet')\n"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Stderr, "airlock:") {
		t.Errorf("control: a run with no refusal has a hint: %q", res.Stderr)
	}
}
