package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
)

// TestAttackSystemCredentials: as root, only a fixed list of names under
// /etc was hidden, so every other root-only credential there
// (/etc/wireguard/*.conf, /etc/docker/key.json) was readable. Now a
// system file is judged by what it is: one an unprivileged user could
// not read (root's, not world-readable) is refused to a command run by
// root too, whatever its name. Evidence: the planted credentials' value
// never appears in the output, and the world-readable file beside them
// does (the view shows the directory); the control reads all three on
// the host as root. As uid 65534 the kernel refuses them already, and
// the same checks hold.
func TestAttackSystemCredentials(t *testing.T) {
	dir := sandboxtest.SystemSecrets(t)
	sb, _ := attackTarget(t, nil)
	if !sandboxtest.Unprivileged() {
		st := sb.Executor.Report().Status(profile.ReadBoundary)
		if !strings.Contains(st.Mechanism, "id-mapped") {
			t.Fatalf("read-boundary as root does not name the id-mapped system paths: %+v", st)
		}
	}
	for _, name := range []string{"key.conf", "group.conf"} {
		path := filepath.Join(dir, name)
		p := sandboxtest.Probe{Args: sandboxtest.Sh(`cat "$1"; cat "$2"; cp "$1" copy 2>/dev/null; cat copy 2>/dev/null; true`, path, filepath.Join(dir, "public.conf"))}
		if !sandboxtest.Unprivileged() {
			requireControl(t, sb.Host(t, p), sandboxtest.SystemSecretValue)
			os.Remove(filepath.Join(sb.Workspace, "copy"))
		}
		o := sb.Run(t, p)
		if strings.Contains(o.Output(), sandboxtest.SystemSecretValue) {
			t.Errorf("ATTACK SUCCEEDED: the sandbox read %s (root's, mode %s)\n%s", path, modeOf(path), o)
		}
		if data, _ := os.ReadFile(filepath.Join(sb.Workspace, "copy")); strings.Contains(string(data), sandboxtest.SystemSecretValue) {
			t.Errorf("ATTACK SUCCEEDED: the sandbox copied %s into the workspace", path)
		}
		if !strings.Contains(o.Stdout, "public") {
			t.Errorf("the world-readable file beside %s was not readable, so the test proves nothing\n%s", name, o)
		}
	}
}

func modeOf(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	return fi.Mode().Perm().String()
}
