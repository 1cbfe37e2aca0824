package sandbox_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// queueProbe opens argv[3] connections to argv[1]:argv[2], asks each for
// the largest send buffer, and queues on them until none takes more; it
// prints how many bytes it queued.
const queueProbe = `
import socket, sys
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
socks, total, chunk = [], 0, b"x" * (1 << 20)
for _ in range(n):
    s = socket.create_connection((host, port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 30)
    s.setblocking(False)
    socks.append(s)
progress = True
while progress:
    progress = False
    for s in socks:
        try:
            total += s.send(chunk)
            progress = True
        except (BlockingIOError, OSError):
            pass
print("queued", total, flush=True)
`

// TestAttackBrokerSocketMemory: the connect broker's host TCP sockets
// were made by the supervisor, so the kernel charged their send buffers
// to the supervisor's cgroup, not the run's: 256 MiB queued under
// --memory 32MiB. They are made in the run's cgroup now, and what the
// command queues counts against its memory budget. Evidence: a sink on a
// test host that accepts and never reads (with a tiny receive buffer,
// so the data stays on the sending side); the command queues at most its
// budget, where the same program with a budget four times larger than
// what it queued before would queue far more (the control).
func TestAttackBrokerSocketMemory(t *testing.T) {
	testnet.RequireTools(t, "python3")
	l := newEgressLab(t)
	// A port of its own: the host's network namespace is shared with
	// whatever else runs on this machine.
	sink := l.pub.ListenTCP(t, "", 0)
	port := sink.Addr().(*net.TCPAddr).Port
	if rc, err := sink.(*net.TCPListener).SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := sink.Accept()
			if err != nil {
				return
			}
			held = append(held, c) // never read
		}
	}()
	const budget = 48 << 20
	run := func(memory profile.Size) (int64, *sandbox.Result) {
		ws := t.TempDir()
		s := profile.Preset("workspace")
		s.Workspace = ws
		s.Network = profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test:" + strconv.Itoa(port)}}
		s.Budgets.Memory = memory
		p, err := profile.New(s)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := sandbox.NewWithOptions(p, sandbox.Options{Resolver: l.dns.Resolver()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ex.Close() })
		if ex.Report().Status(profile.ResourceLimits).Status != sandbox.Enforced {
			t.Skip("no writable cgroup: the memory budget is an rlimit, which counts no kernel buffer")
		}
		res, err := ex.Run(context.Background(), sandbox.Cmd{Args: []string{"python3", "-c", queueProbe, "allowed.test", strconv.Itoa(port), "16"}, Timeout: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		_, after, ok := strings.Cut(string(res.Stdout), "queued ")
		if !ok {
			return -1, res
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(after), 10, 64)
		return n, res
	}
	queued, res := run(budget)
	t.Logf("under --memory 48MiB: %d bytes queued, %s, memory peak %v", queued, res.Status, res.Limits["memory_peak_bytes"])
	if queued > budget {
		t.Errorf("ATTACK SUCCEEDED: the command queued %d bytes on host sockets under a memory budget of %d\n%s", queued, budget, res.Stderr)
	}
	// The run is over: its host sockets, their queues full of what the
	// peer never read, must be gone, not left to retry for minutes.
	if n := hostSocketsTo(t, port); n != 0 {
		t.Errorf("ATTACK SUCCEEDED: %d host sockets of the run to the sink outlive it", n)
	}
	// Control: with room, the same program queues more than the budget,
	// so the budget is what bounded it.
	more, res := run(4 * budget)
	t.Logf("under --memory 192MiB: %d bytes queued, %s", more, res.Status)
	if more <= budget {
		t.Fatalf("control: with a budget of 192MiB the program queued only %d bytes; the test proves nothing", more)
	}
}

// hostSocketsTo counts the TCP sockets in this (the host's) network
// namespace whose peer port is port, in any state (/proc/net/tcp).
func hostSocketsTo(t *testing.T, port int) int {
	t.Helper()
	n := 0
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 3 {
				continue
			}
			_, rport, _ := strings.Cut(fields[2], ":")
			if p, err := strconv.ParseInt(rport, 16, 32); err == nil && int(p) == port {
				n++
			}
		}
	}
	return n
}
