package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// connectProbe connects to a TCP address, a socket path or an abstract
// socket ("@name").
const connectProbe = `
import socket, sys
kind, addr = sys.argv[1], sys.argv[2]
if kind == "tcp":
    host, port = addr.rsplit(":", 1)
    s, target = socket.socket(socket.AF_INET), (host, int(port))
else:
    s = socket.socket(socket.AF_UNIX)
    target = "\0" + addr[1:] if addr.startswith("@") else addr
s.settimeout(3)
try:
    s.connect(target)
except OSError as e:
    print("connect refused: errno=%s %s" % (e.errno, e))
    sys.exit(1)
print("CONNECTED", flush=True)
try:
    s.sendall(b"x")  # the listener may already have closed its end
except OSError:
    pass
`

// attackListener runs the connect probe against l: on the host first,
// which the listener must accept, then in sb, which it must not. It
// returns whether the sandboxed connection arrived (for a known gap).
func attackListener(t *testing.T, sb *sandboxtest.Sandbox, l *sandboxtest.Listener) (arrived bool, o sandboxtest.Outcome) {
	t.Helper()
	p := sandboxtest.Probe{Args: sandboxtest.Py(connectProbe, l.Network, l.Address)}
	requireControl(t, sb.Host(t, p), "CONNECTED")
	if n := l.WaitAccepted(1, 2*time.Second); n != 1 {
		t.Fatalf("positive control failed: the host listener accepted %d connections from the host probe, want 1", n)
	}
	o = sb.Run(t, p)
	// A connection, had one been made, is accepted within this.
	time.Sleep(200 * time.Millisecond)
	return l.Accepted() > 1, o
}

func requireNoAccept(t *testing.T, sb *sandboxtest.Sandbox, l *sandboxtest.Listener) {
	t.Helper()
	arrived, o := attackListener(t, sb, l)
	if arrived {
		t.Errorf("ATTACK SUCCEEDED: the host listener on %s %s accepted the sandboxed connection\n%s", l.Network, l.Address, o)
	}
	requireNotIn(t, o, "CONNECTED")
}

// Connecting to host TCP listeners: on loopback and on a non-loopback
// address of this machine that the test created (an interface of its own).
func TestAttackConnectTCP(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	t.Run("loopback", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "tcp", "127.0.0.1:0"))
	})
	t.Run("non-loopback", func(t *testing.T) {
		addr := sandboxtest.HostAddress(t)
		requireNoAccept(t, sb, sandboxtest.Listen(t, "tcp", addr+":0"))
	})
}

// Connecting to host unix sockets: pathname sockets outside the view (in
// a host directory no preset shows, and under the caller's temp directory,
// which the private /tmp covers), the Docker socket, one inside the
// workspace, and abstract sockets (with the default network "none", and
// with "all", where only Landlock's abstract-socket scope stands between
// the command and the host's abstract sockets).
func TestAttackConnectUnixSockets(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	t.Run("pathname/outside-any-view", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", filepath.Join(sandboxtest.OutsideDir(t), "s.sock")))
	})
	t.Run("pathname/callers-tmp", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", filepath.Join(sandboxtest.ShortTempDir(t), "s.sock")))
	})
	t.Run("docker-socket", func(t *testing.T) {
		for _, real := range []string{"/var/run/docker.sock", "/run/docker.sock"} {
			if fi, err := os.Stat(real); err == nil && fi.Mode()&os.ModeSocket != 0 {
				// A real daemon counts nothing for us: the evidence is the
				// probe's own report, after the control shows it works.
				p := sandboxtest.Probe{Args: sandboxtest.Py(connectProbe, "unix", real)}
				c := sb.Host(t, p)
				if c.ExitCode == 0 {
					requireNotIn(t, sb.Run(t, p), "CONNECTED")
					return
				}
				t.Logf("%s exists but this user cannot connect to it on the host; using a stand-in", real)
			}
		}
		// No usable daemon: a stand-in listener where a daemon would be,
		// outside the view.
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", filepath.Join(sandboxtest.OutsideDir(t), "docker.sock")))
	})
	t.Run("pathname/in-workspace", func(t *testing.T) {
		// A host process listening on a socket inside the workspace: the
		// workspace is shared, so the socket is hidden at start.
		l := sandboxtest.Listen(t, "unix", filepath.Join(sb.Workspace, "agent.sock"))
		requireNoAccept(t, sb, l)
	})
	t.Run("abstract", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", "@"+sandboxtest.Marker(t, "abstract")))
	})
	t.Run("abstract/network-all", func(t *testing.T) {
		if !sandbox.ProbeHost().Tun {
			t.Skip("network all refuses to start without a TAP device (TestAttackNetAllWithoutTun): nothing is shared")
		}
		sb := sandboxtest.New(t, preset, sb.Workspace, func(s *profile.Spec) { s.Network.Mode = profile.NetworkModeAll })
		st := sb.Executor.Report().Status(profile.IPCIsolation)
		if !strings.Contains(st.Mechanism, "abstract-socket scope") {
			t.Skipf("with the host network shared, only Landlock's abstract-socket scope (ABI 6) blocks abstract sockets, and the Report says this host lacks it: %s %s (%s)", st.Status, st.Mechanism, st.Reason)
		}
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", "@"+sandboxtest.Marker(t, "abstract")))
	})
}
