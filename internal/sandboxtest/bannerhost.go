package sandboxtest

import (
	"os"
	"testing"

	"github.com/airlockhq/airlock/internal/testnet"
)

// BannerHost makes a test host on the given prefixes, behind a veth pair
// (never off this machine), with a listener on its IPv4 address that
// writes banner to every connection and counts the connections it
// accepts: the host-side evidence a network rule test checks for a
// connection that must not arrive, and its positive control for one that
// must. It is for tests whose probe is python3 and whose sandbox reaches
// the host through the egress gateway, so it skips when not root (only
// root makes the host), without /usr/bin/python3 or /dev/net/tun, or
// without the network tools.
func BannerHost(t *testing.T, prefix4, prefix6 string) (h *testnet.Host, ln *testnet.CountingListener, banner string) {
	t.Helper()
	if Unprivileged() {
		t.Skip("only root can make the test host")
	}
	if !Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("no /dev/net/tun: network allow needs the egress gateway")
	}
	testnet.Require(t)
	h = testnet.NewHost(t, prefix4, prefix6)
	ln = testnet.Count(h.ListenTCP(t, h.Addr4.String(), 0))
	banner = Marker(t, "banner")
	testnet.ServeBanner(ln, banner)
	return h, ln, banner
}
