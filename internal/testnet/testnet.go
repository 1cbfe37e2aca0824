// Package testnet builds the private networks the egress tests run on:
// network namespaces joined to this machine's by veth pairs, servers
// listening inside them, and an upstream DNS server that logs every
// question it is asked. Nothing it makes routes off the machine: every
// address is on a veth pair the test created, and NewHost checks that
// the kernel routes the test host's addresses over that pair before any
// test sends to them.
//
// It asserts nothing about airlock. Every helper takes a testing.TB,
// fails the test when the harness itself breaks, and removes what it made
// through t.Cleanup.
package testnet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Require skips the test unless it runs as root with ip(8) and a TUN
// device: namespaces and veth pairs need both.
func Require(t testing.TB) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to create network namespaces and veth pairs")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs iproute2 (ip) to create network namespaces")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("needs /dev/net/tun")
	}
}

// RequireTools skips the test unless every named program is installed.
func RequireTools(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s is not installed (bash .ci/run installs it)", n)
		}
	}
}

// IP runs ip(8) with args and fails the test on error.
func IP(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Netns is a named network namespace (ip netns).
type Netns struct {
	Name string
}

// NewNetns creates a namespace named prefix plus a random suffix, with
// loopback up; t.Cleanup deletes it.
func NewNetns(t testing.TB, prefix string) *Netns {
	t.Helper()
	sweepOnce.Do(sweepStale)
	n := &Netns{Name: fmt.Sprintf("%s%d-%s", prefix, os.Getpid(), randomSuffix())}
	IP(t, "netns", "add", n.Name)
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", n.Name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", n.Name, err, out)
		}
		os.RemoveAll(filepath.Join("/etc/netns", n.Name))
		os.Remove("/etc/netns") // only if empty: ours, or left by nobody
	})
	IP(t, "-n", n.Name, "link", "set", "lo", "up")
	return n
}

var sweepOnce sync.Once

// staleName is a namespace name NewNetns gives: its prefix, the pid of
// the test process that made it, a random suffix.
var staleName = regexp.MustCompile(`^airlock-[a-z]+-([0-9]+)-[0-9a-f]{8}$`)

// sweepStale deletes the namespaces (and with them the veth pairs and
// their addresses) that test processes made and could not delete because
// they were killed, a timeout's SIGQUIT for one: left, they hold the
// prefixes the next run's test hosts need. Only namespaces whose maker is
// gone are touched; a pid in use again by anything keeps its namespaces.
func sweepStale() {
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		m := staleName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			continue
		}
		exec.Command("ip", "netns", "del", e.Name()).Run()
		os.RemoveAll(filepath.Join("/etc/netns", e.Name()))
	}
}

// Do runs f on a thread that has entered the namespace. Sockets and
// devices f creates stay in the namespace after it returns.
func (n *Netns) Do(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		// The thread is never unlocked: if switching back failed it must
		// die with this goroutine rather than serve another one.
		runtime.LockOSThread()
		self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		defer unix.Close(self)
		target, err := unix.Open("/run/netns/"+n.Name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- err
			return
		}
		err = unix.Setns(target, unix.CLONE_NEWNET)
		unix.Close(target)
		if err != nil {
			errc <- fmt.Errorf("setns %s: %w", n.Name, err)
			return
		}
		ferr := f()
		if err := unix.Setns(self, unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leave %s: %w", n.Name, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- ferr
	}()
	return <-errc
}

// Command returns a command that runs in the namespace (ip netns exec,
// which also binds /etc/netns/NAME/resolv.conf over /etc/resolv.conf when
// SetResolvConf wrote one).
func (n *Netns) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", n.Name, name}, args...)...)
}

// SetResolvConf makes programs run through Command use nameserver.
func (n *Netns) SetResolvConf(t testing.TB, nameserver string) {
	t.Helper()
	dir := filepath.Join("/etc/netns", n.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "resolv.conf"), []byte("nameserver "+nameserver+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Host is a test host: a namespace joined to this machine's by a veth
// pair. The test host holds .2 (or ::2) of each prefix, this machine .1.
type Host struct {
	*Netns
	Addr4, Addr6 netip.Addr // the test host's addresses
	Link         string     // this machine's end of the veth pair
}

// NewHost creates a test host on the IPv4 and IPv6 prefixes given (e.g.
// "198.51.100.0/24", "2001:db8:a1::/64"). The prefixes must not be in use
// on this machine; each test package uses its own.
func NewHost(t testing.TB, prefix4, prefix6 string) *Host {
	t.Helper()
	p4, p6 := netip.MustParsePrefix(prefix4).Masked(), netip.MustParsePrefix(prefix6).Masked()
	local4, host4 := p4.Addr().Next(), p4.Addr().Next().Next()
	local6, host6 := p6.Addr().Next(), p6.Addr().Next().Next()
	h := &Host{Netns: NewNetns(t, "airlock-th-"), Addr4: host4, Addr6: host6}
	h.Link = "alth" + randomSuffix()[:6]
	peer := h.Link + "p"
	IP(t, "link", "add", h.Link, "type", "veth", "peer", "name", peer)
	t.Cleanup(func() { exec.Command("ip", "link", "del", h.Link).Run() })
	IP(t, "link", "set", peer, "netns", h.Name)
	IP(t, "addr", "add", fmt.Sprintf("%s/%d", local4, p4.Bits()), "dev", h.Link)
	IP(t, "addr", "add", fmt.Sprintf("%s/%d", local6, p6.Bits()), "dev", h.Link, "nodad")
	IP(t, "link", "set", h.Link, "up")
	IP(t, "-n", h.Name, "addr", "add", fmt.Sprintf("%s/%d", host4, p4.Bits()), "dev", peer)
	IP(t, "-n", h.Name, "addr", "add", fmt.Sprintf("%s/%d", host6, p6.Bits()), "dev", peer, "nodad")
	IP(t, "-n", h.Name, "link", "set", peer, "up")
	for _, a := range []netip.Addr{host4, host6} {
		out, err := exec.Command("ip", "route", "get", a.String()).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "dev "+h.Link+" ") {
			t.Fatalf("refusing to use %s: the kernel does not route it over the test's veth %s: %s %v", a, h.Link, out, err)
		}
	}
	return h
}

// ListenTCP listens on the test host's addr:port (addr "" for all).
func (h *Host) ListenTCP(t testing.TB, addr string, port int) net.Listener {
	t.Helper()
	var l net.Listener
	err := h.Do(func() (err error) {
		l, err = net.Listen("tcp", net.JoinHostPort(addr, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", h.Name, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// ListenUDP listens on the test host's addr:port (addr "" for all).
func (h *Host) ListenUDP(t testing.TB, addr string, port int) net.PacketConn {
	t.Helper()
	var c net.PacketConn
	err := h.Do(func() (err error) {
		c, err = net.ListenPacket("udp", net.JoinHostPort(addr, fmt.Sprint(port)))
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s: %v", h.Name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func randomSuffix() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// CountingListener counts the connections it accepts: the test host's
// evidence that a refused connection never reached it.
type CountingListener struct {
	net.Listener
	n atomic.Int64
}

// Count wraps l.
func Count(l net.Listener) *CountingListener { return &CountingListener{Listener: l} }

// Accept implements net.Listener.
func (c *CountingListener) Accept() (net.Conn, error) {
	conn, err := c.Listener.Accept()
	if err == nil {
		c.n.Add(1)
	}
	return conn, err
}

// Accepted is the number of connections accepted so far.
func (c *CountingListener) Accepted() int64 { return c.n.Load() }
