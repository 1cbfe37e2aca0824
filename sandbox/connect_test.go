package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/testnet"
	"github.com/airlockhq/airlock/profile"
)

// brokerProbe is a python3 program run in the sandbox: it connects a TCP
// socket set up as argv[1] says to argv[2]:argv[3], sends an HTTP request
// and prints what the socket looked like afterwards and the reply's body.
const brokerProbe = `
import errno, os, select, socket, sys
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
family, _, _, _, addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0]
s = socket.socket(family, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
if mode == "inheritable":
    s.set_inheritable(True)
if mode == "bound":
    s.bind(("0.0.0.0", 0))
if mode == "nonblocking":
    s.setblocking(False)
    rc = s.connect_ex(addr)
    if rc not in (0, errno.EINPROGRESS):
        sys.exit("connect_ex: %s" % errno.errorcode.get(rc, rc))
    select.select([], [s], [], 10)
    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if err:
        sys.exit("SO_ERROR: %s" % errno.errorcode.get(err, err))
    s.setblocking(True)
else:
    try:
        s.connect(addr)
    except OSError as e:
        print("connect:", errno.errorcode.get(e.errno, e.errno))
        sys.exit(3)
print("local", s.getsockname()[0])
print("nodelay", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0)
print("inheritable", os.get_inheritable(s.fileno()))
s.sendall(b"GET /hello HTTP/1.0\r\nHost: " + host.encode() + b"\r\n\r\n")
data = b""
while True:
    b = s.recv(65536)
    if not b:
        break
    data += b
print(data.split(b"\r\n\r\n", 1)[-1].decode(), end="")
`

// TestConnectBroker: the TCP connections the gateway allows are made by
// the supervisor on the host and handed to the sandbox in place of its
// socket (they then bypass the gateway's stack); the program sees an
// ordinary connected socket, blocking or not, with its options and its
// close-on-exec flag; what the broker does not take (a socket bound
// first) still works through the gateway; a destination's refusal
// reaches the program as ECONNREFUSED; refused destinations stay refused.
func TestConnectBroker(t *testing.T) {
	testnet.RequireTools(t, "python3")
	l := newEgressLab(t)
	ex, ws := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test", "allowed.test:9"}})
	if err := os.WriteFile(filepath.Join(ws, "probe.py"), []byte(brokerProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := func(mode, host, port string) (string, string) {
		t.Helper()
		res := egressRun(t, ex, "/usr/bin/python3 probe.py "+mode+" "+host+" "+port)
		return string(res.Stdout), string(res.Stderr)
	}

	for _, mode := range []string{"blocking", "nonblocking", "inheritable"} {
		t.Run(mode, func(t *testing.T) {
			out, stderr := probe(mode, "allowed.test", "80")
			if !strings.Contains(out, egressHello) {
				t.Fatalf("no reply through the broker: stdout %q stderr %q", out, stderr)
			}
			// The sandbox's own address would mean the gateway's stack
			// carried the connection.
			if strings.Contains(out, "local "+egress.SandboxIPv4+"\n") {
				t.Errorf("the connection was not brokered: %q", out)
			}
			if !strings.Contains(out, "nodelay True") {
				t.Errorf("TCP_NODELAY was lost: %q", out)
			}
			if want := "inheritable " + map[bool]string{true: "True", false: "False"}[mode == "inheritable"]; !strings.Contains(out, want) {
				t.Errorf("close-on-exec changed: want %q in %q", want, out)
			}
		})
	}
	t.Run("a bound socket goes through the gateway", func(t *testing.T) {
		out, stderr := probe("bound", "allowed.test", "80")
		if !strings.Contains(out, egressHello) || !strings.Contains(out, "local "+egress.SandboxIPv4+"\n") {
			t.Fatalf("want the reply over the gateway's stack: stdout %q stderr %q", out, stderr)
		}
	})
	t.Run("DNS over TCP to the gateway", func(t *testing.T) {
		if _, err := exec.LookPath("dig"); err != nil {
			t.Skip("no dig")
		}
		mustSucceed(t, egressRun(t, ex, "dig +tcp +short +time=3 +tries=1 allowed.test A"), l.pub.Addr4.String())
	})
	t.Run("the destination refuses", func(t *testing.T) {
		out, stderr := probe("blocking", "allowed.test", "9")
		if !strings.Contains(out, "connect: ECONNREFUSED") {
			t.Fatalf("want ECONNREFUSED: stdout %q stderr %q", out, stderr)
		}
	})
	t.Run("a refused port stays refused", func(t *testing.T) {
		res := egressRun(t, ex, "/usr/bin/python3 probe.py blocking allowed.test 8081")
		mustDeny(t, res, "tcp", "allowed.test:8081", "port 8081 is not allowed for allowed.test")
		if n := l.port8081.Accepted(); n != 0 {
			t.Fatalf("the test host accepted %d connections on port 8081", n)
		}
	})
}

// brokerAttack is a python3 program run in the sandbox that tries to
// turn a socket the broker connected on the host into one that connects
// or listens elsewhere. It prints one "step: outcome" line per attempt.
const brokerAttack = `
import ctypes, errno, select, socket, sys, time
host, allowed, closed, refused = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
libc = ctypes.CDLL(None, use_errno=True)
addr = socket.getaddrinfo(host, allowed, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
def outcome(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
def report(step, f):
    print(step + ":", outcome(f), flush=True)

# 1. A brokered socket, dissolved with connect(AF_UNSPEC), then aimed at a
#    refused port, then made to listen.
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.connect((addr, allowed))
unspec = (ctypes.c_ubyte * 16)()
rc = libc.connect(s.fileno(), unspec, 16)
print("unspec:", "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno()), flush=True)
report("rearm connect", lambda: s.connect((addr, refused)))
report("rearm listen", lambda: s.listen(5))

# 2. A non-blocking brokered connect that fails (nothing listens on the
#    closed port), then the same socket aimed at the refused port.
t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
t.setblocking(False)
rc = t.connect_ex((addr, closed))
select.select([], [t], [], 5)
print("failed connect:", errno.errorcode.get(t.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), "ok"), flush=True)
t.setblocking(True)
report("retry elsewhere", lambda: t.connect((addr, refused)))

# 3. Addresses too short or absent, for sandbox and brokered sockets
#    alike: the kernel's errors, and the supervisor keeps answering.
for sock in (socket.socket(socket.AF_INET, socket.SOCK_STREAM), s):
    for n in (0, 1, 2, 8):
        buf = (ctypes.c_ubyte * 16)(2, 0)
        rc = libc.connect(sock.fileno(), buf if n else None, n)
        print("short %d:" % n, "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno()), flush=True)
rc = libc.connect(t.fileno(), ctypes.c_void_p(8), 16)
print("bad pointer:", "ok" if rc == 0 else errno.errorcode.get(ctypes.get_errno()), flush=True)

# 4. TCP Fast Open: a connect inside sendto.
u = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
report("fastopen", lambda: u.sendto(b"x", socket.MSG_FASTOPEN, (addr, refused)))

# 5. A server and a client on the sandbox's own loopback still work.
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.bind(("127.0.0.1", 0))
srv.listen(1)
c = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
report("loopback connect", lambda: c.connect(srv.getsockname()))
a, _ = srv.accept()
a.sendall(b"pong")
print("loopback reply:", c.recv(4).decode(), flush=True)
`

// TestConnectBrokerAttacks: a socket of the host's network namespace in
// the sandbox's hands connects and listens nowhere else. The test host's
// refused port must see no connection at all.
func TestConnectBrokerAttacks(t *testing.T) {
	testnet.RequireTools(t, "python3")
	l := newEgressLab(t)
	ex, ws := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test", "allowed.test:9"}})
	if err := os.WriteFile(filepath.Join(ws, "attack.py"), []byte(brokerAttack), 0o644); err != nil {
		t.Fatal(err)
	}
	res := egressRun(t, ex, "/usr/bin/python3 attack.py allowed.test 80 9 8081")
	out := string(res.Stdout)
	for _, want := range []string{
		"unspec: EACCES",
		"rearm connect: EACCES",
		"rearm listen: ",
		"failed connect: ECONNREFUSED",
		"retry elsewhere: EACCES",
		"fastopen: ENOTSUP", // EOPNOTSUPP, as Python names it
		"short 0: EINVAL",
		"short 8: EINVAL",
		"bad pointer: EFAULT",
		"loopback connect: ok",
		"loopback reply: pong",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the output:\n%s\nstderr: %s", want, out, res.Stderr)
		}
	}
	if strings.Contains(out, "rearm listen: ok") {
		t.Errorf("a brokered socket listened:\n%s", out)
	}
	if n := l.port8081.Accepted(); n != 0 {
		t.Fatalf("the test host accepted %d connections on the refused port", n)
	}
	found := false
	for _, d := range res.Denials {
		found = found || (d.Protocol == "tcp" && strings.HasSuffix(d.Target, ":8081"))
	}
	if !found {
		t.Errorf("no denial of port 8081: %+v", res.Denials)
	}

	// Positive control: the same program outside the sandbox does reach
	// the refused port, so the probe can tell.
	ctl, err := exec.Command("/usr/bin/python3", filepath.Join(ws, "attack.py"), l.pub.Addr4.String(), "80", "9", "8081").CombinedOutput()
	if !strings.Contains(string(ctl), "rearm connect: ok") || l.port8081.Accepted() == 0 {
		t.Fatalf("control: the unsandboxed probe did not reach port 8081 (%v): %s", err, ctl)
	}
}
