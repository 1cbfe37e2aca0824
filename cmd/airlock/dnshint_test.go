package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestRunDNSHint: with the network off, a failed name lookup gets one
// airlock line on stderr saying why, however many lookups fail, and a dns
// denial in the Report; a run without a lookup gets neither.
func TestRunDNSHint(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed")
	}
	bin := buildAirlock(t)
	lookup := `
import socket, sys
for h in ("pypi.example", "registry.example"):
    try:
        socket.getaddrinfo(h, 443)
    except socket.gaierror as e:
        print("lookup of", h, "failed:", e.strerror, file=sys.stderr)
`
	_, out, errOut := runCLI(t, bin, "run", "--workspace", t.TempDir(), "--report", "-", "--", "python3", "-c", lookup)
	if n := strings.Count(errOut, "airlock: a name lookup failed: the network is off"); n != 1 {
		t.Errorf("want one airlock line about the failed lookups, got %d:\n%s", n, errOut)
	}
	if !strings.Contains(out, `"protocol": "dns"`) {
		t.Errorf("the Report has no dns denial:\n%s", out)
	}
	_, out, errOut = runCLI(t, bin, "run", "--workspace", t.TempDir(), "--report", "-", "--", "python3", "-c", "print('no lookup')")
	if strings.Contains(errOut, "name lookup") || strings.Contains(out, `"protocol": "dns"`) {
		t.Errorf("control without a lookup: stderr %q, report has a dns denial: %v", errOut, strings.Contains(out, `"dns"`))
	}
}

// TestRunReadOnlyHint: a write refused by a read-only mount (a protected
// path, a system path) gets one airlock line right after the command's
// own message, however many writes fail, and a filesystem denial in the
// Report; the control write to the workspace gets neither.
func TestRunReadOnlyHint(t *testing.T) {
	bin := buildAirlock(t)
	ws := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	_, out, errOut := runCLI(t, bin, "run", "--workspace", ws, "--report", "-", "--", "sh", "-c",
		"echo x > .git/hooks/pre-commit; echo y > /usr/airlock-x; echo z > ok.txt")
	lines := strings.Split(errOut, "\n")
	if n := strings.Count(errOut, "airlock: a write was refused"); n != 1 || len(lines) < 2 ||
		!strings.Contains(lines[0], "Read-only file system") || !strings.HasPrefix(lines[1], "airlock: a write was refused") {
		t.Errorf("want the command's message, then one airlock line:\n%s", errOut)
	}
	if !strings.Contains(out, "write to a path that is read-only in the sandbox") {
		t.Errorf("the Report has no filesystem denial:\n%s", out)
	}
	_, out, errOut = runCLI(t, bin, "run", "--workspace", ws, "--report", "-", "--", "sh", "-c", "echo z > ok.txt")
	if strings.Contains(errOut, "write was refused") || strings.Contains(out, "read-only in the sandbox") {
		t.Errorf("control: stderr %q", errOut)
	}
}
