package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeTokenLifecycle: tokens made with roles are listed (never
// their text), a revoked one is refused by the running daemon at its next
// request, and a workspace is acted on only once registered.
func TestServeTokenLifecycle(t *testing.T) {
	bin, dir, dsn, _, person, _ := serveSetup(t)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, append(append([]string{"serve"}, args...), "--db", dsn)...)
		cmd.Env = serveEnv(dir)
		return runCmd(t, cmd)
	}
	free := createServeToken(t, bin, dir, dsn, "--role", "agent", "--agent", "b", "--expires", "24h")
	code, out, errOut := run("token", "list")
	if code != 0 || strings.Contains(out, "alk_") || strings.Count(out, "tok_") != 3 || !strings.Contains(out, "agent") || !strings.Contains(out, "expires ") {
		t.Fatalf("token list: %d %q %q", code, out, errOut)
	}
	d := startDaemon(t, bin, dir, dsn)
	other := filepath.Join(dir, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	call := `{"tool":"Bash","input":{"command":"make"},"workspace":"` + other + `"}`
	if code := d.call(t, free, "POST", "/v1/decide", call, nil); code != 403 {
		t.Fatalf("decide in an unregistered workspace: %d", code)
	}
	if code, out, errOut := run("workspace", "add", other); code != 0 || strings.TrimSpace(out) != other {
		t.Fatalf("workspace add: %d %q %q", code, out, errOut)
	}
	if code, out, _ := run("workspace", "list"); code != 0 || strings.TrimSpace(out) != other {
		t.Fatalf("workspace list: %d %q", code, out)
	}
	var dec decided
	if code := d.call(t, free, "POST", "/v1/decide", call, &dec); code != 200 || dec.Decision != "ask" {
		t.Fatalf("decide in a registered workspace: %d %+v", code, dec)
	}
	if code, _, errOut := run("workspace", "remove", other); code != 0 {
		t.Fatalf("workspace remove: %d %q", code, errOut)
	}
	if code := d.call(t, free, "POST", "/v1/decide", call, nil); code != 403 {
		t.Fatalf("decide after the workspace was removed: %d", code)
	}

	if code := d.call(t, person, "GET", "/v1/whoami", "", nil); code != 200 {
		t.Fatalf("whoami: %d", code)
	}
	var id string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " person ") {
			id = strings.Fields(line)[0]
		}
	}
	if code, _, errOut := run("token", "revoke", id); code != 0 || !strings.Contains(errOut, "revoked") {
		t.Fatalf("token revoke %s: %d %q", id, code, errOut)
	}
	if code := d.call(t, person, "GET", "/v1/whoami", "", nil); code != 401 {
		t.Fatalf("a revoked token: %d, want 401", code)
	}
	if code, out, _ := run("token", "list"); code != 0 || !strings.Contains(out, "revoked ") {
		t.Fatalf("token list after revoke: %q", out)
	}
}
