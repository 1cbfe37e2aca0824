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

// ifconfProbe connects a TCP socket to argv[1]:argv[2] (in the sandbox
// the connect broker hands it a host socket) and asks the kernel, on
// that socket, for the interfaces of its network namespace
// (SIOCGIFCONF) and for the index of argv[3] (SIOCGIFINDEX). It prints
// the socket's local address, then one "if NAME" line per interface.
const ifconfProbe = `
import ctypes, errno, socket, struct, sys
host, port, link = sys.argv[1], int(sys.argv[2]), sys.argv[3]
addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_STREAM)[0][4]
s = socket.create_connection(addr, timeout=10)
print("local", s.getsockname()[0])
libc = ctypes.CDLL(None, use_errno=True)
class ifconf(ctypes.Structure):
    _fields_ = [("len", ctypes.c_int), ("buf", ctypes.c_void_p)]
buf = ctypes.create_string_buffer(40 * 256)
ifc = ifconf(len(buf), ctypes.addressof(buf))
if libc.ioctl(s.fileno(), 0x8912, ctypes.byref(ifc)) < 0:
    print("SIOCGIFCONF", errno.errorcode[ctypes.get_errno()])
else:
    for i in range(0, ifc.len, 40):
        print("if", buf.raw[i:i+16].split(b"\0")[0].decode())
req = ctypes.create_string_buffer(link.encode().ljust(40, b"\0"), 40)
if libc.ioctl(s.fileno(), 0x8933, req) < 0:
    print("SIOCGIFINDEX", errno.errorcode[ctypes.get_errno()])
else:
    print("if index", link, struct.unpack_from("i", req.raw, 16)[0])
`

// A socket the connect broker hands the sandbox belongs to the host's
// network namespace, where the kernel answers interface ioctls: on it,
// SIOCGIFCONF would list the host's interfaces and SIOCGIFINDEX find
// one by name. The host interface the test creates must not show. The
// control runs the probe on the host, where it lists that interface.
func TestAttackBrokeredSocketInterfaces(t *testing.T) {
	testnet.RequireTools(t, "python3")
	l := newEgressLab(t)
	ex, ws := l.executor(t, profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{"allowed.test"}})
	if err := os.WriteFile(filepath.Join(ws, "probe.py"), []byte(ifconfProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	link := l.pub.Link

	control, err := exec.Command("python3", "-c", ifconfProbe, l.pub.Addr4.String(), "80", link).CombinedOutput()
	if err != nil || !strings.Contains(string(control), "if "+link+"\n") || !strings.Contains(string(control), "if index "+link) {
		t.Fatalf("control: the host probe did not find %s (%v): %s", link, err, control)
	}

	res := egressRun(t, ex, "/usr/bin/python3 probe.py allowed.test 80 "+link)
	out := string(res.Stdout)
	if res.Status != "succeeded" || !strings.Contains(out, "local ") {
		t.Fatalf("the probe did not connect: %s %q %q", res.Status, out, res.Stderr)
	}
	// The sandbox's own address would mean the gateway's stack carried
	// the connection, not a brokered host socket: the test would prove
	// nothing.
	if strings.Contains(out, "local "+egress.SandboxIPv4+"\n") {
		t.Fatalf("the connection was not brokered: %q", out)
	}
	if strings.Contains(out, link) {
		t.Errorf("the host's interface %s is visible through the brokered socket: %q", link, out)
	}
	if !strings.Contains(out, "SIOCGIFCONF EPERM") || !strings.Contains(out, "SIOCGIFINDEX EPERM") {
		t.Errorf("want both ioctls refused with EPERM: %q", out)
	}
	// The sandbox's own interfaces still read over netlink.
	mustSucceed(t, egressRun(t, ex, "ip -o link show"), "eth0")
}
