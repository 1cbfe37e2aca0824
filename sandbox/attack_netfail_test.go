package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// envNoTun marks the test binary re-run in a mount namespace whose
// /dev/net is an empty tmpfs (no TUN device).
const envNoTun = "AIRLOCK_TEST_NO_TUN"

// TestAttackNetAllWithoutTun: network "all" promises every public
// address and none of the private ones. Where /dev/net/tun cannot be
// used (an ordinary user on a host whose device is 0600, as here), it
// ran with the host's own network and said nothing: private ranges and
// the host's loopback were reachable. Now the Executor refuses to be
// made, naming private-range-block, and nothing of the command runs.
// Evidence: a listener on the host's loopback that the host probe (the
// control) reaches and the sandbox never does. As root, whose TUN device
// works, the test re-runs itself in a mount namespace that hides it.
func TestAttackNetAllWithoutTun(t *testing.T) {
	if sandbox.ProbeHost().Tun {
		if os.Getenv(envNoTun) == "1" {
			t.Fatal("/dev/net/tun still opens in the mount namespace that hides it")
		}
		if os.Geteuid() != 0 {
			t.Skip("this user can open /dev/net/tun, and only root can hide it for the test")
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Skip("unshare (util-linux) is not installed; it is how the test hides /dev/net/tun")
		}
		cmd := exec.Command(unshare, "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
			`mount -t tmpfs -o mode=0755 airlock-no-tun /dev/net && exec "$0" "$@"`,
			os.Args[0], "-test.run", "^TestAttackNetAllWithoutTun$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), envNoTun+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("without /dev/net/tun:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestAttackNetAllWithoutTun") {
			t.Fatalf("the test failed without /dev/net/tun: %v", err)
		}
		return
	}
	l := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	ws := sandboxtest.Workspace(t)
	spec, err := profile.LookupPreset(preset)
	if err != nil {
		t.Fatal(err)
	}
	spec.Workspace = ws
	spec.Network.Mode = profile.NetworkModeAll
	p, err := profile.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sandbox.New(p)
	if err == nil {
		// What the run would do: attackListener runs the control first.
		arrived, o := attackListener(t, &sandboxtest.Sandbox{Workspace: ws, Executor: ex}, l)
		t.Fatalf("network all ran without its egress layer (arrived on the host's loopback: %v):\n%s\n%s", arrived, ex.Report(), o)
	}
	var ue *sandbox.UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "private-range-block") || !strings.Contains(err.Error(), "TAP device") {
		t.Fatalf("err = %v; want an UnavailableError naming private-range-block and the missing TAP device", err)
	}
	// Control: the same connection from the host arrives.
	sb := &sandboxtest.Sandbox{Workspace: ws}
	requireControl(t, sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Py(connectProbe, l.Network, l.Address)}), "CONNECTED")
	if n := l.WaitAccepted(1, 2e9); n != 1 {
		t.Fatalf("the host listener accepted %d connections, want only the control's", n)
	}
}
