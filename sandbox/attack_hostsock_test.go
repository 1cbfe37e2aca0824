package sandbox_test

import (
	"net"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// ifconfProbe connects a TCP socket to argv[1]:argv[2] (in the sandbox
// the connect broker hands it a host socket) and asks the kernel, on
// that socket, for the interfaces of its network namespace with their
// IPv4 addresses (SIOCGIFCONF) and for the index of the interface named
// argv[3] (SIOCGIFINDEX). It prints the socket's local address, then one
// "if NAME ADDRESS" line per interface.
const ifconfProbe = `
import ctypes, errno, socket, struct, sys
host, port, link = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=10)
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
        name = buf.raw[i:i+16].split(b"\0")[0].decode()
        print("if", name, socket.inet_ntoa(buf.raw[i+20:i+24]))
req = ctypes.create_string_buffer(link.encode().ljust(40, b"\0"), 40)
if libc.ioctl(s.fileno(), 0x8933, req) < 0:
    print("SIOCGIFINDEX", errno.errorcode[ctypes.get_errno()])
else:
    print("if index", link, struct.unpack_from("i", req.raw, 16)[0])
`

// A socket the connect broker hands the sandbox belongs to the host's
// network namespace, where the kernel answers interface ioctls: on it,
// SIOCGIFCONF would list the host's interfaces and addresses, and
// SIOCGIFINDEX find one by name. The destination is a listener on the
// host's loopback, allowed by its literal; the evidence is a
// non-loopback address the test gave a host interface of its own, which
// must not show. The control runs the probe on the host, where it does.
func TestAttackBrokeredSocketInterfaces(t *testing.T) {
	ln := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	_, port, _ := net.SplitHostPort(ln.Address)
	allow := func(s *profile.Spec) {
		s.Network = profile.NetworkSpec{Mode: profile.NetworkModeAllow, Allow: []string{ln.Address}}
	}
	spec := profile.Preset(preset)
	spec.Workspace = sandboxtest.Workspace(t)
	allow(&spec)
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	// Without the gateway there is no broker and no host socket to ask.
	if st := sandbox.ReportFor(p).Status(profile.NetworkFiltered); st.Status != sandbox.Enforced {
		t.Skipf("no egress gateway for this user on this host, so no brokered sockets: %s", st.Reason)
	}
	addr := sandboxtest.HostAddress(t)
	sb, _ := attackTarget(t, allow)
	link := hostLinkOf(t, addr)
	probe := sandboxtest.Probe{Args: sandboxtest.Py(ifconfProbe, "127.0.0.1", port, link)}

	control := sb.Host(t, probe)
	if !strings.Contains(control.Stdout, " "+addr+"\n") || !strings.Contains(control.Stdout, "if index "+link) {
		t.Fatalf("control: the host probe did not find %s on %s; the test proves nothing: %s", addr, link, control)
	}

	o := sb.Run(t, probe)
	if o.ExitCode != 0 || !strings.Contains(o.Stdout, "local ") {
		t.Fatalf("the probe did not connect: %s", o)
	}
	// The sandbox's own address would mean the gateway's stack carried
	// the connection, not a brokered host socket: nothing would be proved.
	if strings.Contains(o.Stdout, "local "+egress.SandboxIPv4+"\n") {
		t.Skipf("the connection was not brokered (no connect notifier on this host): %s", o)
	}
	if strings.Contains(o.Stdout, addr) || strings.Contains(o.Stdout, link) {
		t.Errorf("the host's interface %s (%s) is visible through the brokered socket: %s", link, addr, o)
	}
	if !strings.Contains(o.Stdout, "SIOCGIFCONF EPERM") || !strings.Contains(o.Stdout, "SIOCGIFINDEX EPERM") {
		t.Errorf("want both ioctls refused with EPERM: %s", o)
	}
	// The sandbox's own interfaces still read over netlink.
	if o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh("ip -o link show")}); !strings.Contains(o.Stdout, "eth0") {
		t.Errorf("ip link in the sandbox: %s", o)
	}
}

// hostLinkOf names the host interface that holds addr.
func hostLinkOf(t *testing.T, addr string) string {
	t.Helper()
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range ifs {
		as, _ := i.Addrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.String() == addr {
				return i.Name
			}
		}
	}
	t.Fatalf("no host interface holds %s", addr)
	return ""
}
