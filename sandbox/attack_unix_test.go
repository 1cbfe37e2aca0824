package sandbox_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// lateConnectProbe waits for a socket path to appear (a host server may
// start after the sandbox did), then connects to it: a stream socket, or
// with "dgram" sends one datagram to it.
const lateConnectProbe = `
import os, socket, sys, time
path, kind = sys.argv[1], sys.argv[2]
deadline = time.time() + 20
while not os.path.exists(path) and time.time() < deadline:
    time.sleep(0.02)
try:
    if kind == "dgram":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.sendto(b"x", path)
        print("SENT", flush=True)
    else:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(3)
        s.connect(path)
        print("CONNECTED", flush=True)
except OSError as e:
    print("refused: errno=%s %s" % (e.errno, e))
    sys.exit(1)
`

// ownSocketsProbe is a server and a client inside the sandbox, on a
// pathname socket in the given directory (relative and absolute) and on
// an abstract one.
const ownSocketsProbe = `
import os, socket, sys
d = sys.argv[1]
os.chdir(d)
srv = socket.socket(socket.AF_UNIX)
srv.bind("own-%d.sock" % os.getpid())
srv.listen(4)
for addr in ("own-%d.sock" % os.getpid(), os.path.join(d, "own-%d.sock" % os.getpid()), "\0own-%d" % os.getpid()):
    if addr.startswith("\0"):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(addr)
        srv.listen(4)
    c = socket.socket(socket.AF_UNIX)
    c.connect(addr)
    a, _ = srv.accept()
    c.sendall(b"ping")
    assert a.recv(4) == b"ping"
os.unlink("own-%d.sock" % os.getpid())
print("OWN OK")
`

// Host unix sockets in every directory the sandbox shares with the host
// (an --allow-read and an --allow-write directory, present at the start;
// the workspace and an --allow-write directory, bound by a host process
// after the sandbox started, as a tmux or ssh-agent started during the
// run would) must not be reachable, by stream connect or by datagram.
// The host's listener is the evidence: it must count no connection from
// the sandbox. Controls: the probe reaches each listener from the host;
// a socket the profile names (--allow-socket) is reachable from the
// sandbox; the sandbox's own sockets work.
func TestAttackUnixSocketsInSharedDirs(t *testing.T) {
	readDir, writeDir, named := sandboxtest.ShortTempDir(t), sandboxtest.ShortTempDir(t), sandboxtest.ShortTempDir(t)
	namedSock := filepath.Join(named, "agent.sock")
	sb, _ := attackTarget(t, func(s *profile.Spec) {
		s.Filesystem.Read = append(s.Filesystem.Read, readDir)
		s.Filesystem.Write = append(s.Filesystem.Write, writeDir)
		s.Filesystem.Sockets = append(s.Filesystem.Sockets, namedSock)
	})
	if st := sb.Executor.Report().Status(profile.IPCIsolation); st.Status != sandbox.Enforced {
		t.Skipf("the Report says ipc-isolation is %s here (%s); this test expects the unix socket guard", st.Status, st.Reason)
	}

	t.Run("allow-read/at-start", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", filepath.Join(readDir, "s.sock")))
	})
	t.Run("allow-write/at-start", func(t *testing.T) {
		requireNoAccept(t, sb, sandboxtest.Listen(t, "unix", filepath.Join(writeDir, "s.sock")))
	})
	for _, c := range []struct{ name, dir string }{
		{"workspace/after-start", sb.Workspace},
		{"allow-write/after-start", writeDir},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(c.dir, "late.sock")
			p := sandboxtest.Probe{Args: sandboxtest.Py(lateConnectProbe, path, "stream")}
			run := sb.Start(t, p)
			// The server starts while the sandbox runs (its probe waits
			// for the path).
			l := sandboxtest.Listen(t, "unix", path)
			o := run.Wait()
			time.Sleep(200 * time.Millisecond) // a connection made would be accepted by now
			if n := l.Accepted(); n != 0 {
				t.Errorf("ATTACK SUCCEEDED: the host server bound at %s after the start accepted %d connections from the sandbox\n%s", path, n, o)
			}
			requireNotIn(t, o, "CONNECTED")
			requireControl(t, sb.Host(t, p), "CONNECTED")
			if l.WaitAccepted(1, 2*time.Second) != 1 {
				t.Fatalf("positive control failed: the host probe's connection did not reach the server at %s", path)
			}
		})
	}
	t.Run("workspace/after-start/dgram", func(t *testing.T) {
		path := filepath.Join(sb.Workspace, "late.dgram")
		p := sandboxtest.Probe{Args: sandboxtest.Py(lateConnectProbe, path, "dgram")}
		run := sb.Start(t, p)
		d := listenDgram(t, path)
		o := run.Wait()
		time.Sleep(200 * time.Millisecond)
		if n := d.received.Load(); n != 0 {
			t.Errorf("ATTACK SUCCEEDED: the host datagram server at %s received %d datagrams from the sandbox\n%s", path, n, o)
		}
		requireNotIn(t, o, "SENT")
		requireControl(t, sb.Host(t, p), "SENT")
		deadline := time.Now().Add(2 * time.Second)
		for d.received.Load() == 0 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if d.received.Load() != 1 {
			t.Fatalf("positive control failed: the host probe's datagram did not reach %s", path)
		}
	})

	// The controls that show the guard lets through what it should.
	t.Run("named-socket", func(t *testing.T) {
		l := sandboxtest.Listen(t, "unix", namedSock)
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(connectProbe, "unix", namedSock)})
		if l.WaitAccepted(1, 2*time.Second) != 1 || !strings.Contains(o.Output(), "CONNECTED") {
			t.Fatalf("the socket the profile names (%s) was not reachable from the sandbox\n%s", namedSock, o)
		}
	})
	for _, dir := range []string{"WORKSPACE", "/tmp", writeDir} {
		t.Run("own-sockets/"+filepath.Base(dir), func(t *testing.T) {
			if dir == "WORKSPACE" {
				dir = sb.Workspace
			}
			o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(ownSocketsProbe, dir)})
			if o.ExitCode != 0 || !strings.Contains(o.Output(), "OWN OK") {
				t.Fatalf("a server and a client inside the sandbox could not talk over a unix socket in %s\n%s", dir, o)
			}
		})
	}
}

// dgramListener counts the datagrams a host unix datagram socket gets.
type dgramListener struct{ received atomic.Int64 }

func listenDgram(t *testing.T, path string) *dgramListener {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	d := &dgramListener{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			d.received.Add(1)
		}
	}()
	t.Cleanup(func() {
		c.Close()
		<-done
		os.Remove(path)
	})
	return d
}

// raceProbe connects again and again through one sockaddr buffer while a
// second thread flips its path between the sandbox's own socket and a
// host socket of the same length: a supervisor that checked one path and
// let the kernel read the buffer again would connect to the host's.
const raceProbe = `
import ctypes, os, socket, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
own, host = sys.argv[1].encode(), sys.argv[2].encode()
assert len(own) == len(host)
srv = socket.socket(socket.AF_UNIX)
srv.bind(own)
srv.listen(512)
def drain():
    while True:
        c, _ = srv.accept()
        c.close()
threading.Thread(target=drain, daemon=True).start()
addr = ctypes.create_string_buffer(110)
ctypes.memmove(addr, socket.AF_UNIX.to_bytes(2, "little") + own, 2 + len(own))
names = [own, host]
stop = False
def flip():
    i = 0
    while not stop:
        i ^= 1
        ctypes.memmove(ctypes.addressof(addr) + 2, names[i], len(own))
threading.Thread(target=flip, daemon=True).start()
ok = refused = 0
end = time.time() + 2
while time.time() < end:
    s = socket.socket(socket.AF_UNIX)
    if libc.connect(s.fileno(), addr, 2 + len(own) + 1) == 0:
        ok += 1
    else:
        refused += 1
    s.close()
stop = True
os.unlink(own)
print("connects: %d made, %d refused" % (ok, refused))
`

// The address race: the host listener must count no connection however
// the sandbox rewrites the address while its connect is being checked.
func TestAttackUnixSocketAddressRace(t *testing.T) {
	dir := sandboxtest.ShortTempDir(t)
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Filesystem.Write = append(s.Filesystem.Write, dir) })
	l := sandboxtest.Listen(t, "unix", filepath.Join(dir, "h.sock"))
	p := sandboxtest.Probe{Args: sandboxtest.Py(raceProbe, filepath.Join(dir, "o.sock"), filepath.Join(dir, "h.sock"))}
	requireControl(t, sb.Host(t, p), "connects:")
	if l.WaitAccepted(1, 2*time.Second) == 0 {
		t.Fatal("positive control failed: the racing probe reached the host listener from no connect on the host")
	}
	// A listener of its own for the sandboxed run: the control's
	// connects may still be waiting in the first one's backlog.
	k := sandboxtest.Listen(t, "unix", filepath.Join(dir, "k.sock"))
	p = sandboxtest.Probe{Args: sandboxtest.Py(raceProbe, filepath.Join(dir, "o.sock"), filepath.Join(dir, "k.sock"))}
	o := sb.Run(t, p)
	time.Sleep(200 * time.Millisecond)
	if n := k.Accepted(); n != 0 {
		t.Errorf("ATTACK SUCCEEDED: %d of the sandbox's racing connects reached the host listener\n%s", n, o)
	}
	if !strings.Contains(o.Output(), "connects:") {
		t.Errorf("the racing probe did not finish in the sandbox\n%s", o)
	}
	t.Logf("sandbox: %s", strings.TrimSpace(o.Stdout))
}
