package mcp_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// routeRules deny editing one file and a glob of files, and running rm.
const routeRules = `
[[rule]]
effect = "deny"
match  = "Edit(./config.json)"

[[rule]]
effect = "deny"
match  = "Edit(./keys/*.pem)"

[[rule]]
effect = "deny"
match  = "Bash(rm:*)"
`

// routeWorkspace has the files routeRules protect, a victim for rm and a
// script that removes it.
func routeWorkspace(t *testing.T, rules string) string {
	t.Helper()
	ws := workspace(t)
	policy(t, ws, rules)
	writeHostFile(t, filepath.Join(ws, "config.json"), "{}\n")
	writeHostFile(t, filepath.Join(ws, "keys", "a.pem"), "A\n")
	writeHostFile(t, filepath.Join(ws, "victim.txt"), "keep\n")
	writeHostFile(t, filepath.Join(ws, "gone.sh"), "rm victim.txt\n")
	return ws
}

// held reports, from the host, whether the file at rel in ws still has
// content.
func held(ws, rel, content string) bool {
	data, err := os.ReadFile(filepath.Join(ws, rel))
	return err == nil && string(data) == content
}

// absent reports, from the host, whether nothing (not even a dangling
// symlink) is at rel in ws.
func absent(ws, rel string) bool {
	_, err := os.Lstat(filepath.Join(ws, rel))
	return os.IsNotExist(err)
}

// Edit and Bash deny rules hold against the other routes to the same
// effect, not only the obvious one: replacing a denied file by rename,
// unlinking it, renaming it or its directory away, a new file or symlink
// at a denied glob, and rm run from a script, through xargs, find -exec,
// exec from python or a copy of the binary. The gate may refuse a route
// it sees (xargs rm); either way the host-side evidence is the file as
// it was. The positive control runs each route in a workspace without
// the rules and sees the effect.
func TestServeDenyRulesHoldByEveryRoute(t *testing.T) {
	if !sandboxtest.Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	asUsers(t, testServeRoutes)
}

func testServeRoutes(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession) {
	tests := []struct {
		name, command string
		unchanged     func(ws string) bool
	}{
		{"rename over a denied file", `/usr/bin/python3 -c 'import os; open("t", "w").write("x"); os.rename("t", "config.json")'`,
			func(ws string) bool { return held(ws, "config.json", "{}\n") }},
		{"unlink a denied file", `/usr/bin/python3 -c 'import os; os.unlink("config.json")'`,
			func(ws string) bool { return held(ws, "config.json", "{}\n") }},
		{"new file at a denied glob", `/usr/bin/python3 -c 'open("keys/b.pem", "w").write("x")'`,
			func(ws string) bool { return absent(ws, "keys/b.pem") }},
		{"symlink at a denied glob", `/usr/bin/python3 -c 'import os; os.symlink("/etc/hostname", "keys/d.pem")'`,
			func(ws string) bool { return absent(ws, "keys/d.pem") }},
		{"rename a denied file away", `/usr/bin/python3 -c 'import os; os.rename("keys/a.pem", "c.txt")'`,
			func(ws string) bool { return held(ws, "keys/a.pem", "A\n") }},
		{"rename its directory away", `/usr/bin/python3 -c 'import os; os.rename("keys", "k2")'`,
			func(ws string) bool { return held(ws, "keys/a.pem", "A\n") }},
		{"rm from a script", "bash gone.sh",
			func(ws string) bool { return held(ws, "victim.txt", "keep\n") }},
		{"rm through xargs", "echo victim.txt | xargs rm",
			func(ws string) bool { return held(ws, "victim.txt", "keep\n") }},
		{"rm through find -exec", "find . -name victim.txt -exec rm {} +",
			func(ws string) bool { return held(ws, "victim.txt", "keep\n") }},
		{"rm exec'd by python", `/usr/bin/python3 -c 'import os; os.execvp("/bin/rm", ["rm", "victim.txt"])'`,
			func(ws string) bool { return held(ws, "victim.txt", "keep\n") }},
		{"a copy of rm", `/usr/bin/python3 -c 'import shutil; shutil.copy("/usr/bin/rm", "myrm")' && ./myrm victim.txt`,
			func(ws string) bool { return held(ws, "victim.txt", "keep\n") }},
	}
	ws := routeWorkspace(t, routeRules)
	open := routeWorkspace(t, "")
	// The approver accepts whatever it is asked, so only the deny rules
	// (in the gate or the kernel) stand between a route and its effect.
	cs := connect(t, &elicitor{action: "accept"}, ws)
	cs2 := connect(t, &elicitor{action: "accept"}, open)
	for _, tt := range tests {
		res := call(t, cs, "run_command", map[string]any{"command": tt.command})
		if !tt.unchanged(ws) {
			t.Errorf("ATTACK SUCCEEDED: %s: %q", tt.name, text(res))
		}
		res = call(t, cs2, "run_command", map[string]any{"command": tt.command})
		if tt.unchanged(open) {
			t.Errorf("control: %s without the rules left the file as it was, so the check proves nothing: %q", tt.name, text(res))
		}
		// Each route starts from the files as they were.
		for _, d := range []string{ws, open} {
			os.RemoveAll(filepath.Join(d, "keys"))
			os.Remove(filepath.Join(d, "myrm"))
			os.Remove(filepath.Join(d, "t"))
			os.Remove(filepath.Join(d, "c.txt"))
			os.RemoveAll(filepath.Join(d, "k2"))
		}
		for _, d := range []string{ws, open} {
			writeHostFile(t, filepath.Join(d, "config.json"), "{}\n")
			writeHostFile(t, filepath.Join(d, "keys", "a.pem"), "A\n")
			writeHostFile(t, filepath.Join(d, "victim.txt"), "keep\n")
			chownLike(t, d)
		}
	}
}

// chownLike gives everything in dir to dir's owner: files the test
// rewrites as root stay the server's own when it runs as uid 65534.
func chownLike(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	err = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(st.Uid), int(st.Gid))
	})
	if err != nil {
		t.Fatal(err)
	}
}
