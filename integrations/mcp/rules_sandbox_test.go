package mcp_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/internal/testnet"
)

// The test host's prefixes for this package (each package that uses
// testnet has its own, so parallel packages never share a veth pair).
const (
	serveNet4 = "10.213.51.0/24"
	serveNet6 = "fd00:a1:51::/64"
)

// editProbe rewrites the workflow and creates a new one next to it
// through python, which the gate cannot see into: each half says whether
// the kernel refused it.
const editProbe = `/usr/bin/python3 -c '
for name, text in (("ci.yml", "on: pwned\n"), ("new.yml", "on: planted\n")):
    try:
        open(".github/workflows/" + name, "w").write(text)
        print("WROTE", name)
    except OSError as e:
        print("write refused:", name, e)
'`

// An Edit deny rule holds inside the sandbox mcp serve runs commands in:
// python (a command no rule mentions, so it runs without a prompt)
// neither rewrites the denied workflow nor creates a new file at a denied
// path. Host-side evidence: the workflow's content is unchanged and the
// new file is absent. The positive control, without the rule, rewrites
// and creates both through the same call.
func TestServeEditRuleHoldsInTheSandbox(t *testing.T) {
	if !sandboxtest.Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	asUsers(t, testServeEditRule)
}

func testServeEditRule(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession) {
	const original = "on: push\n"
	editWorkspace := func(rules string) (ws, workflow, planted string) {
		ws = workspace(t)
		policy(t, ws, rules)
		workflow = filepath.Join(ws, ".github", "workflows", "ci.yml")
		writeHostFile(t, workflow, original)
		return ws, workflow, filepath.Join(ws, ".github", "workflows", "new.yml")
	}

	ws, workflow, planted := editWorkspace("[[rule]]\neffect = \"deny\"\nmatch = \"Edit(./.github/workflows/**)\"\n")
	el := &elicitor{action: "decline"}
	cs := connect(t, el, ws)
	res := call(t, cs, "run_command", map[string]any{"command": editProbe})
	o := structured(t, res)
	if o.Status == "denied" {
		t.Fatalf("the gate denied the probe, so the sandbox was never tried: %q", text(res))
	}
	if got := readFile(t, workflow); got != original {
		t.Errorf("ATTACK SUCCEEDED: python rewrote the workflow under deny Edit(./.github/workflows/**): %q (output %q)", got, o.Output)
	}
	if sandboxtest.Exists(planted) {
		t.Errorf("ATTACK SUCCEEDED: python created %s under deny Edit(./.github/workflows/**) (output %q)", planted, o.Output)
	}
	if strings.Count(o.Output, "write refused") != 2 {
		t.Errorf("the probe did not run both halves to a refusal: %q", o.Output)
	}
	if len(el.asked) != 0 {
		t.Errorf("asked: %q", el.asked)
	}

	// Positive control: the same call without the rule writes both.
	open, workflow2, planted2 := editWorkspace("")
	cs2 := connect(t, &elicitor{action: "decline"}, open)
	res = call(t, cs2, "run_command", map[string]any{"command": editProbe})
	if got := readFile(t, workflow2); got != "on: pwned\n" || !sandboxtest.Exists(planted2) {
		t.Errorf("control: without the rule the probe did not write: workflow %q, new file %v, %q", got, sandboxtest.Exists(planted2), text(res))
	}
}

// A Net deny rule holds in the egress layer of the sandbox mcp serve runs
// commands in, against a profile allowlist that names the same address:
// python's socket connect, which the gate does not see as a network call,
// gets no banner from the listener on a test host behind a veth pair made
// here (never off this machine). The positive control, without the rule,
// prints the banner, which only a real connection can, and the listener
// counts every connection it accepts. The test host needs root; mcp serve
// runs as root and, where /dev/net/tun is open to it (mode 0666), as uid
// 65534, which otherwise cannot have a filtered network.
func TestServeNetRuleHoldsInTheSandbox(t *testing.T) {
	h, ln, banner := sandboxtest.BannerHost(t, serveNet4, serveNet6)
	port := ln.Addr().(*net.TCPAddr).Port
	target := net.JoinHostPort(h.Addr4.String(), fmt.Sprint(port))
	probe := fmt.Sprintf(`/usr/bin/python3 -c 'import socket; s = socket.create_connection((%q, %d), timeout=5); print(s.recv(200).decode())'`, h.Addr4.String(), port)
	t.Run("self", func(t *testing.T) {
		testServeNetRule(t, func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession {
			return connectStdio(t, el, serveArgs(ws)...)
		}, ln, target, probe, banner)
	})
	t.Run("uid 65534", func(t *testing.T) {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("setpriv (util-linux) is not installed")
		}
		if fi, err := os.Stat("/dev/net/tun"); err != nil || fi.Mode().Perm()&0o006 != 0o006 {
			t.Skip("/dev/net/tun is not mode 0666 here, so uid 65534 cannot have a filtered network (mcp serve says so and refuses)")
		}
		testServeNetRule(t, func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession {
			return connectNobody(t, setpriv, el, ws)
		}, ln, target, probe, banner)
	})
}

func testServeNetRule(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession, ln *testnet.CountingListener, target, probe, banner string) {
	host, _, _ := net.SplitHostPort(target)
	netWorkspace := func(rules string) string {
		ws := workspace(t)
		policy(t, ws, rules)
		writeHostFile(t, filepath.Join(ws, ".airlock", "profile.toml"), fmt.Sprintf("[network]\nmode = \"allow\"\nallow = [%q]\n", target))
		return ws
	}

	// Positive control first: the allowlisted listener is reachable.
	cs := connect(t, &elicitor{action: "decline"}, netWorkspace(""))
	res := call(t, cs, "run_command", map[string]any{"command": probe})
	if o := structured(t, res); !strings.Contains(o.Output, banner) {
		t.Fatalf("control: the allowlisted listener is not reachable, so the probe proves nothing: status %s %q", o.Status, text(res))
	}

	reached := ln.Accepted()
	if reached == 0 {
		t.Fatal("control: the banner arrived but the listener counted no connection")
	}

	for _, rule := range []string{"Net(" + target + ")", "WebFetch(domain:" + host + ")"} {
		t.Run(rule, func(t *testing.T) {
			el := &elicitor{action: "decline"}
			cs := connect(t, el, netWorkspace(fmt.Sprintf("[[rule]]\neffect = \"deny\"\nmatch = %q\n", rule)))
			res := call(t, cs, "run_command", map[string]any{"command": probe})
			o := structured(t, res)
			if o.Status == "denied" {
				t.Fatalf("the gate denied the probe, so the egress layer was never tried: %q", text(res))
			}
			if strings.Contains(text(res)+o.Output, banner) {
				t.Errorf("ATTACK SUCCEEDED: python reached %s under deny %s: %q", target, rule, o.Output)
			}
			if n := ln.Accepted(); n != reached {
				t.Errorf("ATTACK SUCCEEDED: the listener accepted %d connection(s) under deny %s", n-reached, rule)
			}
			found := false
			for _, d := range o.Denials {
				found = found || d.Kind == "network" && strings.Contains(d.Target, host)
			}
			if !found {
				t.Errorf("the result lists no network denial of %s: %+v %q", target, o.Denials, text(res))
			}
			if len(el.asked) != 0 {
				t.Errorf("asked: %q", el.asked)
			}
		})
	}
}
