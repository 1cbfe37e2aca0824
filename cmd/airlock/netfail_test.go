package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/airlockbin"
)

// TestRunNetAllWithoutTun: `airlock run --net all` by an ordinary user on
// a host whose /dev/net/tun that user cannot use ran with the host's
// network (private ranges and the host's loopback reachable) and said
// nothing. It refuses to start now: exit 125 and one line naming what is
// missing. The run is uid 65534 in a mount namespace where /dev/net is
// an empty tmpfs; the evidence is the file the command would have made.
// The control, the same run with --net none, makes it.
func TestRunNetAllWithoutTun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hide /dev/net/tun in a mount namespace and drop to uid 65534")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (util-linux) is not installed", tool)
		}
	}
	root, err := os.MkdirTemp("", "airlock-no-tun-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	ws := filepath.Join(root, "ws")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Chmod(root, 0o755))
	must(os.Mkdir(ws, 0o755))
	must(os.Chown(ws, 65534, 65534))
	// airlock-gateway too: it serves the run's network.
	bin, err := airlockbin.CopyTo(buildAirlock(t), root)
	if err != nil {
		t.Fatal(err)
	}
	run := func(net string) (int, string, string) {
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c",
			`mount -t tmpfs -o mode=0755 airlock-no-tun /dev/net && exec setpriv --reuid 65534 --regid 65534 --clear-groups -- env HOME="$1" "$2" run --workspace "$3" --net "$4" -- touch ran`,
			"sh", root, bin, ws, net)
		cmd.Env = []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C.UTF-8"}
		return runCmd(t, cmd)
	}
	code, _, errOut := run("all")
	if code != 125 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "private-range-block") || !strings.Contains(errOut, "/dev/net/tun") {
		t.Errorf("--net all without a TUN device: exit %d, stderr %q; want 125 and one line naming private-range-block and /dev/net/tun", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Errorf("ATTACK SUCCEEDED: the command ran with the host's network")
	}
	if code, _, errOut := run("none"); code != 0 {
		t.Fatalf("control: --net none as uid 65534 without a TUN device: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err != nil {
		t.Fatalf("control: the command did not run: %v", err)
	}
}
