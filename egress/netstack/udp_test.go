package netstack_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/egress/netstack"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
)

// udpClient is a UDP client for the sandbox's namespace: python3 udpClient
// 4|6 HOST PORT CMD..., where each CMD is "N:MSG" (send MSG from socket N,
// a connected socket opened on first use, and print the answer), "N:!MSG"
// (send and expect no answer) or "sleep:SECONDS". Without CMDs it reads
// them from stdin, one a line. A missing answer or a refusal (ICMP port
// unreachable on the connected socket) prints the exception's name and
// exits 1.
const udpClient = `
import socket, sys, time
fam = socket.AF_INET6 if sys.argv[1] == "6" else socket.AF_INET
addr = socket.getaddrinfo(sys.argv[2], int(sys.argv[3]), fam, socket.SOCK_DGRAM)[0][4]
socks = {}
for cmd in sys.argv[4:] or (line.strip() for line in sys.stdin):
    n, _, msg = cmd.partition(":")
    if n == "sleep":
        time.sleep(float(msg))
        continue
    if n not in socks:
        socks[n] = socket.socket(fam, socket.SOCK_DGRAM)
        socks[n].settimeout(3)
        socks[n].connect(addr)
    s = socks[n]
    if msg.startswith("!"):
        s.send(msg[1:].encode())
        continue
    try:
        s.send(msg.encode())
        print(s.recv(65535).decode(), flush=True)
    except Exception as e:
        print(type(e).__name__, flush=True)
        sys.exit(1)
`

// udpEcho is a UDP server on a test host that answers each datagram with
// "echo " and the datagram (except datagrams starting with "quiet") and
// remembers where each came from: the gateway's socket on this machine.
type udpEcho struct {
	mu   sync.Mutex
	seen map[string][]netip.AddrPort // payload → sources
}

func newUDPEcho(c net.PacketConn) *udpEcho {
	e := &udpEcho{seen: map[string][]netip.AddrPort{}}
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return // closed by the test's cleanup
			}
			msg := string(buf[:n])
			src := from.(*net.UDPAddr).AddrPort()
			e.mu.Lock()
			e.seen[msg] = append(e.seen[msg], netip.AddrPortFrom(src.Addr().Unmap(), src.Port()))
			e.mu.Unlock()
			if !strings.HasPrefix(msg, "quiet") {
				c.WriteTo([]byte("echo "+msg), from)
			}
		}
	}()
	return e
}

// from returns the sources msg came from.
func (e *udpEcho) from(msg string) []netip.AddrPort {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]netip.AddrPort(nil), e.seen[msg]...)
}

// only returns the one source msg came from, failing the test when it
// came from none or several.
func (e *udpEcho) only(t *testing.T, msg string) netip.AddrPort {
	t.Helper()
	from := e.from(msg)
	if len(from) != 1 {
		t.Fatalf("%q arrived from %v; want one source", msg, from)
	}
	return from[0]
}

// addPublicAddr gives the public test host one more address, routed over
// its veth pair.
func addPublicAddr(t *testing.T, l *lab, addr string) {
	t.Helper()
	testnet.IP(t, "-n", l.pub.Name, "addr", "add", addr+"/32", "dev", "lo")
	testnet.IP(t, "route", "add", addr+"/32", "dev", l.pub.Link)
	if out, err := exec.Command("ip", "route", "get", addr).CombinedOutput(); err != nil || !strings.Contains(string(out), "dev "+l.pub.Link+" ") {
		t.Fatalf("refusing to use %s: not routed over the test's veth %s: %s %v", addr, l.pub.Link, out, err)
	}
}

// udpFlows counts the UDP flows the gateways of this process relay.
func udpFlows() int {
	n := 0
	for _, g := range testnet.GatewayGoroutines() {
		if strings.Contains(g, "netstack.(*udpRelay).run(") {
			n++
		}
	}
	return n
}

// waitUDPFlows waits up to two seconds for udpFlows to be want.
func waitUDPFlows(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for udpFlows() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%d UDP flows relayed, want %d", udpFlows(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// hostSocket reports whether this machine (the test's network namespace,
// where the gateway's host side lives) has a UDP socket on local port
// src connected to dst.
func hostSocket(t *testing.T, src uint16, dst netip.AddrPort) bool {
	t.Helper()
	for _, f := range []string{"/proc/thread-self/net/udp", "/proc/thread-self/net/udp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 3 {
				continue
			}
			if hexPort(fields[1]) == src && hexPort(fields[2]) == dst.Port() {
				return true
			}
		}
	}
	return false
}

func hexPort(addr string) uint16 {
	_, p, _ := strings.Cut(addr, ":")
	n, _ := strconv.ParseUint(p, 16, 16)
	return uint16(n)
}

// TestGatewayUDP: a "/udp" entry lets datagrams through to that host and
// port and the answers back; every other UDP destination is refused and
// recorded, TCP entries do not allow UDP, and UDP entries do not allow
// TCP.
func TestGatewayUDP(t *testing.T) {
	testnet.RequireTools(t, "python3", "nc")
	const udpAddr = "198.51.100.4" // udp.test's address, its own so no TCP entry covers it
	l := newLab(t, profile.NetworkModeAllow,
		"allowed.test", "allowed.test:5353", "udp.test:5400/udp", "[2001:db8:a1::2]:5300/udp",
		"10.213.11.2:5353/udp", "*.wild.test:443/udp")
	addPublicAddr(t, l, udpAddr)
	l.dns.Set("udp.test.", netip.MustParseAddr(udpAddr))
	// A server that answers from a wildcard address could answer from
	// another one, which a connected socket ignores: bind each address.
	udp5400 := newUDPEcho(l.pub.ListenUDP(t, udpAddr, 5400))
	udp5401 := newUDPEcho(l.pub.ListenUDP(t, udpAddr, 5401))
	tcp5400 := testnet.Count(l.pub.ListenTCP(t, udpAddr, 5400))
	pub5353 := newUDPEcho(l.udpSink)
	pub5300 := newUDPEcho(l.pub.ListenUDP(t, "", 5300))
	pub5301 := newUDPEcho(l.pub.ListenUDP(t, "", 5301))
	pub443 := newUDPEcho(l.pub.ListenUDP(t, "", 443))
	priv5353 := newUDPEcho(l.priv.ListenUDP(t, "", 5353))
	client := func(args ...string) []string { return append([]string{"-c", udpClient}, args...) }

	t.Run("allowed host and port, answers come back", func(t *testing.T) {
		l.mustRun(t, "echo one\necho two", "python3", client("4", "udp.test", "5400", "0:one", "0:two")...)
		src := udp5400.only(t, "one")
		if src.Addr() != netip.MustParseAddr("198.51.100.1") {
			t.Errorf("the datagram came from %s, want this machine's end of the veth", src)
		}
		// Both datagrams of a socket are one flow: one socket of the
		// supervisor's, which dialled exactly the checked address.
		if two := udp5400.only(t, "two"); two != src {
			t.Errorf("one flow used two host sockets: %s and %s", src, two)
		}
		if !l.dialled(udpAddr + ":5400") {
			t.Error("the gateway did not dial udp.test's address")
		}
	})
	t.Run("another port on the same host is refused", func(t *testing.T) {
		out := l.mustFail(t, "python3", client("4", "udp.test", "5401", "0:leak")...)
		if !strings.Contains(out, "ConnectionRefusedError") {
			t.Errorf("want ICMP port unreachable in the sandbox, got %s", out)
		}
		l.denied(t, "blocked UDP to udp.test:5401 (port 5401 is not allowed for udp.test; allowed: 5400/udp)")
		if from := udp5401.from("leak"); len(from) != 0 || l.dialled(udpAddr+":5401") {
			t.Fatalf("the refused datagram reached the test host (%v) or was dialled", from)
		}
	})
	t.Run("a TCP entry does not allow UDP", func(t *testing.T) {
		// allowed.test:5353 is a TCP entry: UDP to that very port stays
		// refused.
		l.mustFail(t, "python3", client("4", "allowed.test", "5353", "0:leak")...)
		l.denied(t, "blocked UDP to allowed.test:5353 (UDP other than DNS needs an entry like allowed.test:5353/udp; allowed.test has TCP entries only (80, 443, 5353))")
		if from := pub5353.from("leak"); len(from) != 0 {
			t.Fatalf("the test host received the datagram from %v", from)
		}
	})
	t.Run("a UDP entry does not allow TCP", func(t *testing.T) {
		l.mustFail(t, "nc", "-z", "-w", "3", "udp.test", "5400")
		l.denied(t, "blocked connect to udp.test:5400 (udp.test has UDP entries only (5400/udp); TCP needs an entry without /udp)")
		if n := tcp5400.Accepted(); n != 0 {
			t.Fatalf("the test host accepted %d TCP connections on port 5400", n)
		}
	})
	t.Run("IPv6 literal", func(t *testing.T) {
		l.mustRun(t, "echo six", "python3", client("6", "2001:db8:a1::2", "5300", "0:six")...)
		if src := pub5300.only(t, "six"); src.Addr() != netip.MustParseAddr("2001:db8:a1::1") {
			t.Errorf("the datagram came from %s", src)
		}
		l.mustFail(t, "python3", client("6", "2001:db8:a1::2", "5301", "0:leak")...)
		l.denied(t, "blocked UDP to [2001:db8:a1::2]:5301 (port 5301 is not allowed for 2001:db8:a1::2; allowed: 5300/udp)")
		if from := pub5301.from("leak"); len(from) != 0 {
			t.Fatalf("the test host received the datagram from %v", from)
		}
	})
	t.Run("private literal allowed exactly", func(t *testing.T) {
		l.mustRun(t, "echo private", "python3", client("4", "10.213.11.2", "5353", "0:private")...)
		priv5353.only(t, "private")
		l.mustFail(t, "python3", client("4", "10.213.11.3", "5353", "0:leak")...)
		l.denied(t, "blocked UDP to 10.213.11.3:5353 (10.213.11.3 is a private (RFC 1918) address; only an exact literal entry can allow it)")
		l.mustFail(t, "python3", client("4", "169.254.169.254", "53", "0:leak")...)
		l.denied(t, "blocked UDP to 169.254.169.254:53 (169.254.169.254 is a cloud metadata address")
	})
	t.Run("wildcard, as for QUIC", func(t *testing.T) {
		l.mustRun(t, "echo quic", "python3", client("4", "api.wild.test", "443", "0:quic")...)
		pub443.only(t, "quic")
		l.mustFail(t, "python3", client("4", "wild.test", "443", "0:leak")...)
		l.denied(t, "blocked DNS lookup of wild.test (not in allowlist)")
	})
	t.Run("an address nobody resolved", func(t *testing.T) {
		l.mustFail(t, "python3", client("4", unlisted, "5353", "0:leak")...)
		l.denied(t, "blocked UDP to "+unlisted+":5353 (not in allowlist)")
		if l.dialled(unlisted) {
			t.Fatal("the gateway dialled an address nobody allowed")
		}
	})
}

// TestGatewayUDPPublicMode: with network "all", a literal exception is
// for its own protocol.
func TestGatewayUDPPublicMode(t *testing.T) {
	testnet.RequireTools(t, "python3", "nc")
	l := newLab(t, profile.NetworkModeAll, "10.213.11.2:5353/udp", "10.213.11.2:8080")
	priv5353 := newUDPEcho(l.priv.ListenUDP(t, "", 5353))
	pub5353 := newUDPEcho(l.udpSink)
	l.mustRun(t, "echo private", "python3", "-c", udpClient, "4", "10.213.11.2", "5353", "0:private")
	priv5353.only(t, "private")
	l.mustRun(t, "echo public", "python3", "-c", udpClient, "4", "evil.test", "5353", "0:public")
	pub5353.only(t, "public")
	l.mustFail(t, "python3", "-c", udpClient, "4", "10.213.11.2", "8080", "0:leak")
	l.denied(t, "blocked UDP to 10.213.11.2:8080 (port 8080 is not allowed for 10.213.11.2; allowed: 5353/udp)")
	l.mustFail(t, "nc", "-z", "-w", "3", "10.213.11.2", "5353")
	l.denied(t, "blocked connect to 10.213.11.2:5353 (port 5353 is not allowed for 10.213.11.2; allowed: 8080)")
}

// udpSession is a udpClient in the sandbox's namespace that takes its
// commands on stdin, for flows that outlive one command.
type udpSession struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

func startUDPSession(t *testing.T, l *lab, host, port string) *udpSession {
	t.Helper()
	cmd := l.sbx.Command("python3", "-c", udpClient, "4", host, port)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &udpSession{cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return s
}

// send sends one command and returns what the client printed for it
// ("" for a "!" command, or when it printed nothing in ten seconds).
func (s *udpSession) send(t *testing.T, cmd string) string {
	t.Helper()
	fmt.Fprintln(s.stdin, cmd)
	if _, msg, _ := strings.Cut(cmd, ":"); strings.HasPrefix(msg, "!") {
		return ""
	}
	select {
	case got := <-s.lines:
		return got
	case <-time.After(10 * time.Second):
		return ""
	}
}

// echo sends "N:MSG" and fails the test unless the answer comes back.
func (s *udpSession) echo(t *testing.T, cmd string) {
	t.Helper()
	_, msg, _ := strings.Cut(cmd, ":")
	if got := s.send(t, cmd); got != "echo "+msg {
		t.Fatalf("%s: got %q, want the answer %q", cmd, got, "echo "+msg)
	}
}

// TestGatewayUDPClose: a flow still open when the gateway closes ends
// with it: no goroutine, no socket on this machine, nothing more reaches
// the sandbox.
func TestGatewayUDPClose(t *testing.T) {
	testnet.RequireTools(t, "python3")
	l := newLab(t, profile.NetworkModeAllow, "allowed.test:5353/udp")
	echo := newUDPEcho(l.udpSink)
	dst := netip.AddrPortFrom(l.pub.Addr4, 5353)
	s := startUDPSession(t, l, "allowed.test", "5353")
	s.echo(t, "0:first")
	src := echo.only(t, "first")
	if !hostSocket(t, src.Port(), dst) {
		t.Fatalf("no socket on port %d to %s while the flow is open; the check cannot see it", src.Port(), dst)
	}
	waitUDPFlows(t, 1)

	if err := l.gw.Close(); err != nil {
		t.Fatal(err)
	}
	waitUDPFlows(t, 0)
	if hostSocket(t, src.Port(), dst) {
		t.Fatalf("the gateway's socket on port %d outlived Close", src.Port())
	}
	if got := s.send(t, "0:after"); strings.HasPrefix(got, "echo") {
		t.Fatalf("the sandbox got an answer after Close: %q", got)
	}
	if from := echo.from("after"); len(from) != 0 {
		t.Fatalf("a datagram sent after Close reached the test host from %v", from)
	}
}

// TestGatewayUDPIdle: a flow lives while either direction carries
// datagrams, ends when both have been idle, and the next datagram of the
// same socket starts a new one.
func TestGatewayUDPIdle(t *testing.T) {
	testnet.RequireTools(t, "python3")
	const idle = time.Second
	netstack.SetUDPLimits(t, idle, 512)
	l := newLab(t, profile.NetworkModeAllow, "allowed.test:5353/udp")
	echo := newUDPEcho(l.udpSink)
	dst := netip.AddrPortFrom(l.pub.Addr4, 5353)
	s := startUDPSession(t, l, "allowed.test", "5353")
	s.echo(t, "0:one")
	first := echo.only(t, "one")

	// Only the sandbox sends, for three idle periods; the flow stays.
	for i := range 12 {
		s.send(t, fmt.Sprintf("0:!quiet%d", i))
		time.Sleep(idle / 4)
	}
	s.echo(t, "0:two")
	if two := echo.only(t, "two"); two != first {
		t.Fatalf("a flow busy one way was ended: %s, then %s", first, two)
	}

	// Both ways idle: the flow and its socket go.
	time.Sleep(idle)
	waitUDPFlows(t, 0)
	if hostSocket(t, first.Port(), dst) {
		t.Fatalf("the socket of an idle flow is still open")
	}
	s.echo(t, "0:three")
	if three := echo.only(t, "three"); three == first {
		t.Fatalf("the datagram after the idle end came from the old socket %s", three)
	}
}

// TestGatewayUDPFlowBound: at the bound on flows, the flow idle longest
// gives way to a new one.
func TestGatewayUDPFlowBound(t *testing.T) {
	testnet.RequireTools(t, "python3")
	netstack.SetUDPLimits(t, time.Minute, 2)
	l := newLab(t, profile.NetworkModeAllow, "allowed.test:5353/udp")
	echo := newUDPEcho(l.udpSink)
	s := startUDPSession(t, l, "allowed.test", "5353")
	s.echo(t, "1:a")
	s.echo(t, "2:b")
	s.echo(t, "3:c") // ends socket 1's flow
	waitUDPFlows(t, 2)
	s.echo(t, "2:b2") // still its flow
	if echo.only(t, "b2") != echo.only(t, "b") {
		t.Fatal("socket 2's flow was ended, not socket 1's, the one idle longest")
	}
	s.echo(t, "1:a2") // a new flow, which ends socket 3's
	if echo.only(t, "a2") == echo.only(t, "a") {
		t.Fatal("socket 1's flow was not ended")
	}
	waitUDPFlows(t, 2)
}
