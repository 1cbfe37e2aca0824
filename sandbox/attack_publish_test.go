package sandbox_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// A dev server in the sandbox (network none: only its own lo) is
// reachable on the host's loopback at the published port, and only
// there: a second server on a port not published is not, and the
// published port listens on 127.0.0.1 only.
func TestAttackPublish(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	must(t, os.WriteFile(filepath.Join(sb.Workspace, "published-marker.txt"), []byte("x"), 0o644))
	port, hostPort, other := sandboxtest.FreePort(t), sandboxtest.FreePort(t), sandboxtest.FreePort(t)
	// Two servers: one published, one not.
	script := `python3 -m http.server --bind 127.0.0.1 ` + itoa(port) + ` & python3 -m http.server --bind 127.0.0.1 ` + itoa(other) + ` & wait`
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
		Args: sandboxtest.Sh(script), Timeout: 2 * time.Minute,
		Publish: []sandbox.Publish{{HostPort: hostPort, Port: port}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := proc.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	defer proc.Kill()
	page, err := sandboxtest.HTTPGet(net.JoinHostPort("127.0.0.1", itoa(hostPort)), 30*time.Second)
	if err != nil || !strings.Contains(page, "published-marker.txt") {
		t.Fatalf("the published server is not reachable from the host at 127.0.0.1:%d: %v %q", hostPort, err, page)
	}
	// The other server, the same way, is not: nothing listens for it.
	if _, err := sandboxtest.HTTPGet(net.JoinHostPort("127.0.0.1", itoa(other)), time.Second); err == nil {
		t.Errorf("ATTACK SUCCEEDED: the unpublished port %d is reachable from the host", other)
	}
	// Nor the published port on another of the host's addresses.
	if addr := sandboxtest.HostAddress(t); addr != "" {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(addr, itoa(hostPort)), 2*time.Second); err == nil {
			c.Close()
			t.Errorf("the published port is reachable on %s, not on loopback only", addr)
		}
	}
	proc.Kill()
	res, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Published) != 1 || res.Published[0].String() != "127.0.0.1:"+itoa(hostPort)+"->"+itoa(port) {
		t.Errorf("the Result's published ports: %+v", res.Published)
	}
	// Once the run is over, the host port is free again.
	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", itoa(hostPort))); err != nil {
		t.Errorf("the host port is still held after the run: %v", err)
	} else {
		l.Close()
	}
}

// The control of the issue: without --publish, the server in the
// sandbox is not reachable from the host; and a host port in use is a
// setup error, with nothing run.
func TestAttackPublishControls(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	port := sandboxtest.FreePort(t)
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh("exec python3 -m http.server --bind 127.0.0.1 " + itoa(port)), Timeout: 20 * time.Second})
	if _, err := sandboxtest.HTTPGet(net.JoinHostPort("127.0.0.1", itoa(port)), 3*time.Second); err == nil {
		t.Errorf("without Publish, the sandbox's server is reachable from the host")
	}
	r.Kill()
	r.Wait()

	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	bp := busy.Addr().(*net.TCPAddr).Port
	proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{Args: sandboxtest.Sh("true"), Publish: []sandbox.Publish{{Port: bp}}})
	if err != nil {
		t.Fatal(err)
	}
	err = proc.Start()
	if err == nil || !strings.Contains(err.Error(), "choose another host port: --publish HOST_PORT:"+itoa(bp)) {
		t.Errorf("a host port in use: %v, want a setup error naming the fix", err)
	}
}

// A profile's network.publish_addresses opens a published port on
// another of the host's addresses (one the test adds to a dummy
// interface: never off this machine), and only the profile can: the same
// request under a profile without it is a setup error, nothing listens
// there, and the command does not run.
func TestAttackPublishAddress(t *testing.T) {
	addr := sandboxtest.HostAddress(t)
	port, hostPort := sandboxtest.FreePort(t), sandboxtest.FreePort(t)
	target := net.JoinHostPort(addr, itoa(hostPort))
	serve := func(sb *sandboxtest.Sandbox, marker string) (*sandbox.Process, error) {
		proc, err := sb.Executor.Prepare(context.Background(), sandbox.Cmd{
			Args:    sandboxtest.Sh("echo ran > " + marker + " && exec python3 -m http.server --bind 127.0.0.1 " + itoa(port)),
			Timeout: 2 * time.Minute,
			Publish: []sandbox.Publish{{HostAddr: addr, HostPort: hostPort, Port: port}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return proc, proc.Start()
	}

	// Without the setting: refused before anything runs.
	plain, _ := attackTarget(t, nil)
	refusedMarker := filepath.Join(plain.Workspace, "refused-ran")
	proc, err := serve(plain, refusedMarker)
	if err == nil {
		defer proc.Kill()
		if _, gerr := sandboxtest.HTTPGet(target, 5*time.Second); gerr == nil {
			t.Errorf("ATTACK SUCCEEDED: a profile without publish_addresses published on %s", target)
		}
		t.Fatalf("publishing on %s without publish_addresses started the run", addr)
	}
	if !strings.Contains(err.Error(), "publish_addresses") {
		t.Errorf("the refusal names no fix: %v", err)
	}
	if _, err := os.Stat(refusedMarker); err == nil {
		t.Error("the refused run ran its command")
	}
	if c, err := net.DialTimeout("tcp", target, 2*time.Second); err == nil {
		c.Close()
		t.Errorf("something listens on %s after the refusal", target)
	}

	// With it: the same request binds that address and serves there.
	wide, _ := attackTarget(t, func(s *profile.Spec) { s.Network.PublishAddresses = []string{addr} })
	must(t, os.WriteFile(filepath.Join(wide.Workspace, "wide-marker.txt"), []byte("x"), 0o644))
	proc, err = serve(wide, filepath.Join(wide.Workspace, "wide-ran"))
	if err != nil {
		t.Fatalf("start with publish_addresses = [%q]: %v", addr, err)
	}
	defer proc.Kill()
	page, err := sandboxtest.HTTPGet(target, 30*time.Second)
	if err != nil || !strings.Contains(page, "wide-marker.txt") {
		t.Fatalf("the published server is not reachable at %s: %v %q", target, err, page)
	}
	// Only that address: loopback's same port is not published.
	if c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", itoa(hostPort)), 2*time.Second); err == nil {
		c.Close()
		t.Errorf("publishing on %s also listens on 127.0.0.1", addr)
	}
	proc.Kill()
	res, err := proc.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Published) != 1 || res.Published[0].String() != target+"->"+itoa(port) {
		t.Errorf("the Result's published ports: %+v", res.Published)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
