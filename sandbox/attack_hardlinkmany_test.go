package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// linksAtOpen reports whether the sandbox checks hard links at each open
// (root: fanotify permission events and the create guard) rather than
// with masks found by a walk of the workspace.
func linksAtOpen(sb *sandboxtest.Sandbox) bool {
	h := sb.Executor.Report().Host
	return h.FanotifyPerm && h.CreateGuard && h.UnixGuard
}

// TestAttackHardLinkBeyondBound: a hard link to a secret stays unreadable
// however many other hard links the workspace holds, and the limit of
// 20,000 read-only hard links never shrinks what is protected silently.
// The workspace holds 20,001 hard links to world-readable files outside
// it, then one to a 0600 key (last in every order). Evidence: the key's
// value never appears; the shared files outside are unchanged after the
// sandbox tried to append to one past the 20,000th. Controls: the host
// reads the key through the link; the sandbox reads the first and the
// last shared file where the check is at open (root), and where it is a
// walk (unprivileged) reads the first and either the last or a denial
// saying how many were masked.
func TestAttackHardLinkBeyondBound(t *testing.T) {
	sb, secrets := attackTarget(t, nil)
	const shared = 20001
	outside := filepath.Join(sandboxtest.Workspace(t), "store")
	must(t, os.MkdirAll(outside, 0o755))
	inside := filepath.Join(sb.Workspace, "node_modules")
	must(t, os.MkdirAll(inside, 0o755))
	for i := range shared {
		name := fmt.Sprintf("f%05d.js", i)
		must(t, os.WriteFile(filepath.Join(outside, name), []byte(fmt.Sprintf("shared %d\n", i)), 0o644))
		if err := os.Link(filepath.Join(outside, name), filepath.Join(inside, name)); err != nil {
			t.Skipf("cannot hard-link into the workspace (another filesystem?): %v", err)
		}
	}
	key := filepath.Join(inside, "zzz-key")
	if err := os.Link(secrets.SSHKey, key); err != nil {
		t.Skipf("cannot hard-link the planted key into the workspace: %v", err)
	}
	requireControl(t, sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cat node_modules/zzz-key`)}), secrets.Value)
	last := fmt.Sprintf("f%05d.js", shared-1)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cd node_modules; cat f00000.js ` + last + `; cat zzz-key; chmod 644 zzz-key; cat zzz-key
echo planted >> ` + last + ` 2>/dev/null && echo WROTE-SHARED; true`)})
	requireNotIn(t, o, secrets.Value)
	if !strings.Contains(o.Stdout, "shared 0\n") {
		t.Errorf("a hard link to a world-readable file is not readable:\n%s", o)
	}
	lastReadable := strings.Contains(o.Stdout, fmt.Sprintf("shared %d\n", shared-1))
	masked := false
	for _, d := range o.Result.Denials {
		masked = masked || strings.Contains(d.Reason, "past the first")
	}
	switch {
	case linksAtOpen(sb) && (!lastReadable || masked):
		t.Errorf("with the check at open, a shared hard link past the 20,000th is not readable (masked denial: %v):\n%s", masked, o)
	case !linksAtOpen(sb) && !lastReadable && !masked:
		t.Errorf("a shared hard link past the 20,000th is masked and no denial says so:\n%s", o)
	}
	if data, _ := os.ReadFile(filepath.Join(outside, last)); string(data) != fmt.Sprintf("shared %d\n", shared-1) || strings.Contains(o.Stdout, "WROTE-SHARED") {
		t.Errorf("ATTACK SUCCEEDED: the sandbox wrote a file outside the workspace through a hard link: %q\n%s", data, o)
	}
	if fi, err := os.Stat(secrets.SSHKey); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("ATTACK SUCCEEDED: the key's mode changed through its hard link in the workspace (%v, %v)", fi.Mode(), err)
	}
}

// TestAttackHardLinkToSecretProtectedName: a protected name (.envrc) is
// bound over itself, a mount of its own; a hard link to a secret there
// is as unreadable as anywhere else in the workspace. Evidence: the key's
// value never appears; the control reads it through the link on the host.
func TestAttackHardLinkToSecretProtectedName(t *testing.T) {
	sb, secrets := attackTarget(t, nil)
	link := filepath.Join(sb.Workspace, ".envrc")
	if err := os.Link(secrets.SSHKey, link); err != nil {
		t.Skipf("cannot hard-link the planted key into the workspace: %v", err)
	}
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`cat .envrc; true`)}
	requireControl(t, sb.Host(t, p), secrets.Value)
	requireNotIn(t, sb.Run(t, p), secrets.Value)
}

// TestHardLinksMadeInTheRun: what the run makes itself is its own. A file
// born during the run and hard-linked there is readable and writable
// through both names (compatibility: build tools hard-link their
// outputs), and so is a 0600 one.
func TestHardLinksMadeInTheRun(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`set -e
echo one > a; ln a b; echo two >> b; chmod 600 a; ln a c; cat c; chmod 644 c; echo LINKS-OK`)})
	if o.ExitCode != 0 || !strings.Contains(o.Stdout, "one\ntwo\nLINKS-OK") {
		t.Errorf("hard links made during the run do not work:\n%s", o)
	}
	if d := enforced(o.Result); len(d) != 0 {
		t.Errorf("hard links made during the run were refused: %+v", d)
	}
	if data, err := os.ReadFile(filepath.Join(sb.Workspace, "b")); err != nil || string(data) != "one\ntwo\n" {
		t.Errorf("the host reads %q (%v) at the run's hard link", data, err)
	}
}
