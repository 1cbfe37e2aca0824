package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/internal/testnet"
)

// The test host's prefixes for this package.
const (
	ruleNet4 = "10.213.41.0/24"
	ruleNet6 = "fd00:a1:41::/64"
)

// TestEntryPointsHoldNetRule: a Net or WebFetch(domain:) deny rule holds in the egress layer
// against a profile allowlist that names the same address, through a
// plain airlock run and the hook's rewritten command, for a program the
// gate cannot see into (python). The listener, on a test host behind a
// veth pair, writes a banner only a real connection can print; the
// positive control is the same run and the same hook rewrite without the
// rule file. The test host
// needs root; the runs are made as root and as uid 65534.
func TestEntryPointsHoldNetRule(t *testing.T) {
	h, ln, banner := sandboxtest.BannerHost(t, ruleNet4, ruleNet6)
	target := net.JoinHostPort(h.Addr4.String(), fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	bin := buildAirlock(t)
	for _, nobody := range []bool{false, true} {
		name := "root"
		if nobody {
			name = "uid 65534"
		}
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath("setpriv"); nobody && err != nil {
				t.Skip("setpriv (util-linux) is not installed")
			}
			if fi, err := os.Stat("/dev/net/tun"); nobody && (err != nil || fi.Mode().Perm()&0o006 != 0o006) {
				t.Skip("/dev/net/tun is not mode 0666 here, so uid 65534 cannot have a filtered network (airlock run says so and refuses)")
			}
			testNetRule(t, newHookEnv(t, bin, nobody), ln, target, banner)
		})
	}
}

func testNetRule(t *testing.T, e hookEnv, ln *testnet.CountingListener, target, banner string) {
	host, port, _ := net.SplitHostPort(target)
	e.write(t, filepath.Join(e.ws, ".airlock", "profile.toml"), fmt.Sprintf("[network]\nmode = \"allow\"\nallow = [%q]\n", target))
	probe := fmt.Sprintf(`/usr/bin/python3 -c 'import socket; s = socket.create_connection((%q, %s), timeout=5); print(s.recv(200).decode())'`, host, port)
	policyFile := filepath.Join(e.ws, ".airlock", "policy.toml")

	must(t, os.Remove(policyFile))
	code, so, se := run(e.command(e.ws, e.bin, "run", "--", "bash", "-c", probe), "")
	if code != 0 || !strings.Contains(so, banner) {
		t.Fatalf("control: exit %d %q %q: the allowlisted listener is not reachable, so the probe proves nothing", code, so, se)
	}

	// The hook's rewrite of the same command, without the rule, reaches
	// the listener too.
	decision, rewritten := e.decide(t, e.ws, probe)
	if decision != "allow" || rewritten == "" {
		t.Fatalf("hook control: %s %q, want allow, sandboxed", decision, rewritten)
	}
	code, so, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
	if code != 0 || !strings.Contains(so, banner) {
		t.Fatalf("hook control: exit %d %q %q: the allowlisted listener is not reachable through the rewrite", code, so, se)
	}

	// Host-side evidence besides the banner: the listener counts every
	// connection it accepts.
	reached := ln.Accepted()
	for _, rule := range []string{"Net(" + target + ")", "WebFetch(domain:" + host + ")"} {
		e.write(t, policyFile, fmt.Sprintf("[[rule]]\neffect = \"deny\"\nmatch = %q\n", rule))
		code, so, se = run(e.command(e.ws, e.bin, "run", "--", "bash", "-c", probe), "")
		if code == 0 || strings.Contains(so, banner) {
			t.Errorf("airlock run with deny %s: exit %d %q %q", rule, code, so, se)
		}
		decision, rewritten := e.decide(t, e.ws, probe)
		if decision != "allow" || rewritten == "" {
			t.Fatalf("hook with deny %s: %s %q, want allow, sandboxed", rule, decision, rewritten)
		}
		code, so, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
		if code == 0 || strings.Contains(so, banner) {
			t.Errorf("the hook's rewritten command with deny %s: exit %d %q %q", rule, code, so, se)
		}
		if n := ln.Accepted(); n != reached {
			t.Errorf("ATTACK SUCCEEDED: the listener accepted %d connection(s) under deny %s", n-reached, rule)
		}
	}
}
