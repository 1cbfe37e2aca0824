package sandbox_test

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// queueAndExit opens two connections to argv[1]:argv[2] and fills what
// each can queue towards a peer that does not read. It closes the first
// itself and waits a moment, then exits with the second still open, so
// that the kernel closes it. It prints its local address and how much it
// queued.
const queueAndExit = `
import socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
def fill():
    s = socket.create_connection((host, port), timeout=10)
    s.setblocking(False)
    n = 0
    while True:
        try:
            n += s.send(b"x" * 65536)
        except BlockingIOError:
            return s, n
a, na = fill()
b, nb = fill()
print("local", a.getsockname()[0], "queued", na + nb, flush=True)
a.close()
time.sleep(0.5)
`

// sink accepts connections on the host's loopback and never reads them
// until told: what a client queues stays on the client's side.
type sink struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []*net.TCPConn
}

func newSink(t *testing.T) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A small receive buffer keeps the data on the sending side.
	if rc, err := ln.(*net.TCPListener).SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}
	s := &sink{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c.(*net.TCPConn))
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.closeAll() })
	return s
}

func (s *sink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// take returns the connections accepted so far and forgets them.
func (s *sink) take() []*net.TCPConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.conns
	s.conns = nil
	return out
}

func (s *sink) closeAll() {
	for _, c := range s.take() {
		c.Close()
	}
}

// endOf reads c to its end and says how it ended: "reset" (RST), "eof"
// (FIN) or "open" (still open when the deadline passed).
func endOf(c *net.TCPConn, wait time.Duration) string {
	c.SetReadDeadline(time.Now().Add(wait))
	_, err := io.Copy(io.Discard, c)
	switch {
	case err == nil:
		return "eof"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "open"
	}
	return err.Error()
}

// requireBroker skips the test where a profile edited by allow gets no
// egress gateway, so no brokered socket.
func requireBroker(t *testing.T, allow func(*profile.Spec)) {
	t.Helper()
	spec := profile.Preset(preset)
	spec.Workspace = t.TempDir()
	allow(&spec)
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if st := sandbox.ReportFor(p).Status(profile.NetworkFiltered); st.Status != sandbox.Enforced {
		t.Skipf("no egress gateway for this user on this host, so no brokered sockets: %s", st.Reason)
	}
}

// TestAttackBrokerSocketsOutliveRun: the connect broker's host sockets
// outlived the run when the supervisor was not root. A command that
// queued data towards a peer that does not read, then closed or just
// exited, left its sockets to the kernel as orphans, which kept
// retrying for minutes on the host's memory; only a root supervisor
// aborted them. Evidence on the host: the loopback peer the test owns,
// and the host's socket table. On the host (the control) the program's
// sockets are still there after it exits. After the sandboxed run no
// socket of the run to the peer is left, and the peer sees both
// connections reset, for root and (TestAttacksUnprivileged) uid 65534.
func TestAttackBrokerSocketsOutliveRun(t *testing.T) {
	testnet.RequireTools(t, "python3")
	peer := newSink(t)
	addr := "127.0.0.1:" + strconv.Itoa(peer.port())
	allow := func(s *profile.Spec) {
		s.Network = profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{addr}}
	}
	requireBroker(t, allow)
	sb, _ := attackTarget(t, allow)
	probe := sandboxtest.Probe{Args: sandboxtest.Py(queueAndExit, "127.0.0.1", strconv.Itoa(peer.port()))}

	host := sb.Host(t, probe)
	if host.ExitCode != 0 || !strings.Contains(host.Stdout, "queued ") {
		t.Fatalf("control: the probe fails on the host: %s", host)
	}
	if n := hostSocketsTo(t, peer.port()); n < 2 {
		t.Fatalf("control: %d of the host program's sockets outlive it (want 2, orphans with their queues); the test proves nothing", n)
	}
	peer.closeAll() // the orphans get their reset from the peer
	for i := 0; hostSocketsTo(t, peer.port()) > 0 && i < 100; i++ {
		time.Sleep(50 * time.Millisecond)
	}

	o := sb.Run(t, probe)
	if o.ExitCode != 0 || !strings.Contains(o.Stdout, "queued ") {
		t.Fatalf("the probe did not run: %s", o)
	}
	if strings.Contains(o.Stdout, "local "+egress.SandboxIPv4+" ") {
		t.Skipf("the connections were not brokered (no connect notifier on this host): %s", o)
	}
	if n := hostSocketsTo(t, peer.port()); n != 0 {
		t.Errorf("ATTACK SUCCEEDED: %d host sockets of the run to its peer outlive it\n%s", n, o)
	}
	conns := peer.take()
	if len(conns) != 2 {
		t.Fatalf("the peer accepted %d connections, want 2", len(conns))
	}
	for i, c := range conns {
		if end := endOf(c, 10*time.Second); end != "reset" {
			t.Errorf("connection %d of the ended run: %s, want reset", i, end)
		}
		c.Close()
	}
}

// closeThenWait connects to argv[1]:argv[2], sends a line and closes,
// then waits for the file argv[3], which the test makes once its peer
// has seen the end of the connection.
const closeThenWait = `
import os, socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=10)
print("local", s.getsockname()[0], flush=True)
s.sendall(b"hello\n")
s.close()
for _ in range(200):
    if os.path.exists(sys.argv[3]):
        print("peer saw the end", flush=True)
        break
    time.sleep(0.05)
`

// TestAttackBrokerSocketCloseMidRun (a compatibility test, named to
// rerun as uid 65534 with the attacks): the broker keeps a copy of every host
// socket until the run ends, but a program's own close must still end
// its connection while the run goes on: the peer reads the data and then
// the FIN, not a reset at the end. The control runs the same program on
// the host.
func TestAttackBrokerSocketCloseMidRun(t *testing.T) {
	testnet.RequireTools(t, "python3")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	allow := func(s *profile.Spec) {
		s.Network = profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"127.0.0.1:" + strconv.Itoa(port)}}
	}
	requireBroker(t, allow)
	sb, _ := attackTarget(t, allow)
	run := func(name string, do func(sandboxtest.Probe) sandboxtest.Outcome) {
		flag := filepath.Join(sb.Workspace, "seen."+name)
		got := make(chan string, 1)
		go func() {
			c, err := ln.Accept()
			if err != nil {
				got <- err.Error()
				return
			}
			defer c.Close()
			data, end := make([]byte, 6), "short"
			if _, err := io.ReadFull(c, data); err == nil {
				end = string(data) + endOf(c.(*net.TCPConn), 10*time.Second)
			}
			if end == "hello\neof" {
				os.WriteFile(flag, nil, 0o644)
			}
			got <- end
		}()
		o := do(sandboxtest.Probe{Args: sandboxtest.Py(closeThenWait, "127.0.0.1", strconv.Itoa(port), flag)})
		end := <-got
		if name == "sandbox" && strings.Contains(o.Stdout, "local "+egress.SandboxIPv4+"\n") {
			t.Skipf("the connection was not brokered (no connect notifier on this host): %s", o)
		}
		if end != "hello\neof" || !strings.Contains(o.Stdout, "peer saw the end") {
			t.Errorf("%s: the peer read %q before the program's end; want the line and then EOF while it runs\n%s", name, end, o)
		}
	}
	run("host", func(p sandboxtest.Probe) sandboxtest.Outcome { return sb.Host(t, p) })
	run("sandbox", func(p sandboxtest.Probe) sandboxtest.Outcome { return sb.Run(t, p) })
}
