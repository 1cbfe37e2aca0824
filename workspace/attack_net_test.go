package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// envNetTarget hands the unprivileged re-run the listener the root parent
// made: "ADDR PORT BANNER".
const envNetTarget = "AIRLOCK_TEST_RULE_NET_TARGET"

// The test host's prefixes (each package that uses testnet has its own).
const (
	ruleNet4 = "10.213.31.0/24"
	ruleNet6 = "fd00:a1:31::/64"
	ruleDNS4 = "10.213.32.0/24"
	ruleDNS6 = "fd00:a1:32::/64"
)

// netTarget is a TCP listener on a test host behind a veth pair that
// writes banner to every connection: only a client really connected to it
// can print the banner.
type netTarget struct {
	addr   string
	port   int
	banner string
}

func newNetTarget(t *testing.T) netTarget {
	t.Helper()
	if v := os.Getenv(envNetTarget); v != "" {
		f := strings.Fields(v)
		port, _ := strconv.Atoi(f[1])
		return netTarget{addr: f[0], port: port, banner: f[2]}
	}
	if sandboxtest.Unprivileged() {
		t.Skip("only root can make the test host (TestAttacksUnprivileged hands one to the unprivileged run)")
	}
	testnet.Require(t)
	h := testnet.NewHost(t, ruleNet4, ruleNet6)
	ln := h.ListenTCP(t, h.Addr4.String(), 0)
	nt := netTarget{addr: h.Addr4.String(), port: ln.Addr().(*net.TCPAddr).Port, banner: sandboxtest.Marker(t, "banner")}
	testnet.ServeBanner(ln, nt.banner)
	return nt
}

func (nt netTarget) env() string {
	return fmt.Sprintf("%s=%s %d %s", envNetTarget, nt.addr, nt.port, nt.banner)
}

func (nt netTarget) hostPort() string { return net.JoinHostPort(nt.addr, strconv.Itoa(nt.port)) }

// deny Net(ADDR:PORT) against an allowlist that names the same address,
// and against network all (which reaches a private address only through
// a literal entry for it, so the profile lists it there too): the egress
// layer refuses the connection.
func TestAttackRuleNet(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	nt := newNetTarget(t)
	p := sandboxtest.Probe{Args: sandboxtest.Py(`import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
print(s.recv(200).decode())`, nt.addr, strconv.Itoa(nt.port))}
	modes := map[string]profile.NetworkSpec{
		"allowlist": {Mode: profile.NetworkModeAllow, Allow: []string{nt.hostPort()}},
		"all":       {Mode: profile.NetworkModeAll, Allow: []string{nt.hostPort()}},
	}
	for name, n := range modes {
		t.Run(name, func(t *testing.T) {
			setNet := func(s *profile.Spec) { s.Network = n }
			ws := sandboxtest.Workspace(t)
			requireControl(t, newSandbox(t, ws, setNet).Run(t, p), nt.banner)

			deny := withRules(t, ws, "Net("+nt.hostPort()+")")
			sb := newSandbox(t, ws, func(s *profile.Spec) { setNet(s); deny(s) })
			o := sb.Run(t, p)
			requireNotIn(t, o, nt.banner)
			found := false
			for _, d := range o.Result.Denials {
				found = found || d.Kind == "network" && strings.Contains(d.Target, nt.addr)
			}
			if !found {
				t.Errorf("the Result lists no network denial of %s: %+v\n%s", nt.hostPort(), o.Result.Denials, o)
			}
		})
	}
}

// newSandbox is sandboxtest.New for the workspace preset, skipping when
// the host cannot give the network the spec asks for (no TUN device).
func newSandbox(t *testing.T, ws string, edit func(*profile.Spec)) *sandboxtest.Sandbox {
	t.Helper()
	spec := profile.Preset("workspace")
	spec.Workspace = ws
	edit(&spec)
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.New(p); err != nil {
		var ue *sandbox.UnavailableError
		if errors.As(err, &ue) {
			t.Skipf("this host cannot give the network: %v", err)
		}
		t.Fatal(err)
	}
	return sandboxtest.New(t, "workspace", ws, edit)
}

// deny Net(evil.test) under network all: the command connects to the
// name's address as a literal, never asking the gateway's DNS. The
// gateway looked the denied name up when it started, so the address is
// refused all the same. Root only: the name's DNS server lives on a test
// host only root can make.
func TestAttackRuleNetNameUnderAll(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	if sandboxtest.Unprivileged() {
		t.Skip("the test host with its DNS server needs root")
	}
	testnet.Require(t)
	h := testnet.NewHost(t, ruleDNS4, ruleDNS6)
	nt := newNetTarget(t)
	dns := testnet.NewDNSServer(t, h, map[string][]netip.Addr{"evil.test.": {netip.MustParseAddr(nt.addr)}})
	p := sandbox.Cmd{Args: sandboxtest.Py(`import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
print(s.recv(200).decode())`, nt.addr, strconv.Itoa(nt.port)), Timeout: time.Minute}
	run := func(t *testing.T, deny ...string) *sandbox.Result {
		ws := sandboxtest.Workspace(t)
		spec := profile.Preset("workspace")
		spec.Workspace = ws
		spec.Network = profile.NetworkSpec{Mode: profile.NetworkModeAll, Allow: []string{nt.hostPort()}}
		withRules(t, ws, deny...)(&spec)
		pr, err := profile.New(spec)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := sandbox.NewWithOptions(pr, sandbox.Options{Resolver: dns.Resolver()})
		if err != nil {
			t.Skipf("this host cannot give network all: %v", err)
		}
		t.Cleanup(func() { ex.Close() })
		res, err := ex.Run(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(t); !strings.Contains(string(res.Stdout), nt.banner) {
		t.Fatalf("positive control failed: without the rule the literal address was not reached: %s %s", res.Stdout, res.Stderr)
	}
	res := run(t, "Net(evil.test)")
	if strings.Contains(string(res.Stdout), nt.banner) {
		t.Errorf("ATTACK SUCCEEDED: the denied name's address was reached as a literal: %s", res.Stdout)
	}
	if !dns.Asked("evil.test") {
		t.Error("the gateway never looked the denied name up")
	}
}
