package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestAttackGuardProxyConfined: the create guard's proxy carries out the
// command's guarded calls (an open for writing, a create) itself
// (sandbox/internal/linux/guardproxy.go), so it must be held to what the
// command may do: a proxy with the capabilities of the namespace's owner,
// or outside the command's Landlock domain, would do for the command what
// the command may not do itself (a proxy on threads of the init that do
// not confine themselves, one way tried for issue 21, does both).
// Two routes:
//
//   - capabilities: appending to a workspace file of mode 0444 that the
//     run's user owns (as root, CAP_DAC_OVERRIDE in the user namespace
//     would write it). Evidence: the host file is unchanged. Control:
//     the same append to a 0644 file goes through the same guarded path
//     and lands; as root, the append to the 0444 file works on the host.
//   - Landlock: creating a file in the view's /dev, a writable tmpfs
//     where Landlock gives the command no write right. Evidence: the
//     name is absent in the sandbox after the attempt. Control: a file
//     in /dev/shm, the scratch space, is made.
func TestAttackGuardProxyConfined(t *testing.T) {
	ws := sandboxtest.Workspace(t)
	ro := filepath.Join(ws, "readonly")
	rw := filepath.Join(ws, "writable")
	must(t, os.WriteFile(ro, []byte("orig\n"), 0o444))
	must(t, os.Chmod(ro, 0o444))
	must(t, os.WriteFile(rw, []byte("orig\n"), 0o644))
	before := sandboxtest.FileState(ro)
	sb := sandboxtest.New(t, preset, ws, nil)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`
		echo x >> readonly && echo APPENDED-RO
		echo x >> writable && echo APPENDED-RW
		true > /dev/evil && echo MADE-DEV
		ls /dev/evil >/dev/null 2>&1 && echo DEV-EXISTS
		true > /dev/shm/ok && echo MADE-SHM
		exit 0`)})
	if after := sandboxtest.FileState(ro); after != before {
		t.Errorf("ATTACK SUCCEEDED: the 0444 workspace file changed on the host\n%s", o)
	}
	if strings.Contains(o.Stdout, "APPENDED-RO") {
		t.Errorf("ATTACK SUCCEEDED: the append to the 0444 file was let through\n%s", o)
	}
	if strings.Contains(o.Stdout, "MADE-DEV") || strings.Contains(o.Stdout, "DEV-EXISTS") {
		t.Errorf("ATTACK SUCCEEDED: a file was made in /dev, where Landlock gives no write right\n%s", o)
	}
	if !strings.Contains(o.Stdout, "APPENDED-RW") {
		t.Errorf("control: the append to the 0644 workspace file failed\n%s", o)
	}
	if b, _ := os.ReadFile(rw); string(b) != "orig\nx\n" {
		t.Errorf("control: the 0644 workspace file holds %q, want the append\n%s", b, o)
	}
	if !strings.Contains(o.Stdout, "MADE-SHM") {
		t.Errorf("control: no file could be made in /dev/shm\n%s", o)
	}
	if !sandboxtest.Unprivileged() {
		h := sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(`echo x >> readonly && echo APPENDED-RO`)})
		if !strings.Contains(h.Stdout, "APPENDED-RO") {
			t.Errorf("control: root on the host could not append to the 0444 file\n%s", h)
		}
	}
}
