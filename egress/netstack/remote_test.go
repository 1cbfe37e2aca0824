package netstack_test

import (
	"net/netip"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
	_ "github.com/airlockhq/airlock/egress/netstack" // registers the gateway egress.InProcess returns
	"github.com/airlockhq/airlock/egress/remote"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
)

// viaRemote makes newLab serve its TAP through egress/remote: the
// supervisor's side (remote.Start) and the gateway's (remote.ServeControl
// with the in-process netstack server) on the two ends of a control
// socket, as airlock and airlock-gateway run them, in this process so that the lab's
// resolver and dialer still apply.
var viaRemote bool

// serveRemote starts the gateway's side in a goroutine and returns the
// supervisor's Gateway; base carries what cannot cross a process (the
// lab's resolver and dialer) to the gateway's side.
func serveRemote(t *testing.T, tap *os.File, cfg, base egress.Config) (egress.Gateway, error) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() {
		served <- remote.ServeControl(os.NewFile(uintptr(fds[1]), "control"), base, egress.InProcess())
	}()
	t.Cleanup(func() {
		if err := <-served; err != nil {
			t.Errorf("the gateway's side: %v", err)
		}
	})
	return remote.Start(os.NewFile(uintptr(fds[0]), "control"), tap, cfg)
}

// TestGatewayRemote runs the gateway's suites again through the control
// socket: every connection, lookup, datagram and denial as in process.
func TestGatewayRemote(t *testing.T) {
	viaRemote = true
	t.Cleanup(func() { viaRemote = false })
	t.Run("allowlist", TestGatewayAllowlist)
	t.Run("public mode", TestGatewayPublicMode)
	t.Run("close", TestGatewayClose)
	t.Run("udp", TestGatewayUDP)
	t.Run("udp close", TestGatewayUDPClose)
	t.Run("checks", TestGatewayChecks)
}

// TestGatewayChecks: PermitsTCP and CheckTCP, which the sandbox's connect
// broker asks, decide against the names the gateway resolved; only
// CheckTCP records its refusal, and a closed gateway refuses everything.
func TestGatewayChecks(t *testing.T) {
	testnet.RequireTools(t, "dig")
	l := newLab(t, profile.NetworkModeAllow, "allowed.test")
	pub := l.pub.Addr4
	if l.gw.PermitsTCP(pub, 80) {
		t.Fatal("an address no lookup answered is permitted")
	}
	l.mustRun(t, pub.String()+"\n", "dig", "+short", "allowed.test", "A")
	if !l.gw.PermitsTCP(pub, 80) || !l.gw.CheckTCP(pub, 443) {
		t.Fatal("allowed.test's answer is not permitted on 80 and 443")
	}
	if l.gw.PermitsTCP(pub, 8080) {
		t.Fatal("port 8080 is permitted")
	}
	if list, _ := l.gw.Denials(); len(list) != 0 {
		t.Fatalf("PermitsTCP recorded %v", list)
	}
	if l.gw.CheckTCP(pub, 8081) {
		t.Fatal("CheckTCP allowed port 8081")
	}
	l.denied(t, "blocked connect to allowed.test:8081 (port 8081 is not allowed for allowed.test; allowed: 80, 443)")
	if list, _ := l.gw.Denials(); len(list) != 1 || list[0].Port != 8081 {
		t.Fatalf("Denials() = %v, want the one refusal CheckTCP recorded", list)
	}
	if err := l.gw.Close(); err != nil {
		t.Fatal(err)
	}
	if l.gw.PermitsTCP(pub, 80) || l.gw.CheckTCP(netip.AddrFrom4(pub.As4()), 443) {
		t.Fatal("a closed gateway permits a connection")
	}
}
