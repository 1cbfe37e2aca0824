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
