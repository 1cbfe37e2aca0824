package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// domainProbe tries, inside the sandbox, to read, write and execute each
// path it is given and each entry of /etc three levels deep, and prints
// one line per path: r (a file opened for reading, a directory listed),
// w (a file opened for appending, nothing written; a file made and
// removed in a directory), x (run; only the copies of true it is told
// of). A FIFO, socket or device in /etc is only read.
const domainProbe = `
cp /usr/bin/true /tmp/true 2>/dev/null; cp /usr/bin/true "$HOME/true" 2>/dev/null
for p in "$@" /tmp/true "$HOME/true" $(find /etc -maxdepth 3 2>/dev/null | sort); do
	r=-; w=-; x=-
	if [ -d "$p" ]; then
		ls "$p" >/dev/null 2>&1 && r=r
		true >"$p/.landlock-probe" 2>/dev/null && { w=w; rm -f "$p/.landlock-probe"; }
	elif [ -f "$p" ]; then
		true <"$p" 2>/dev/null && r=r
		true >>"$p" 2>/dev/null && w=w
		case "$p" in */true) "$p" 2>/dev/null && x=x;; esac
	elif [ -e "$p" ]; then
		true <"$p" 2>/dev/null && r=r
	fi
	echo "$p $r$w$x"
done
`

// TestAttackLandlockPlanSameDomain: the Landlock rules the supervisor
// plans (typed, pruned, applied relative to their directory without
// following a symlink) confine the command exactly as the lists the
// helper merged before did. For each profile the probe tries every access
// for real, once under the lists of before and once under the planned
// rules; the two answers must be the same line for line, and a read the
// profile denies must fail in both.
func TestAttackLandlockPlanSameDomain(t *testing.T) {
	outside := sandboxtest.OutsideDir(t)
	readDir, writeDir := filepath.Join(outside, "read"), filepath.Join(outside, "write")
	for _, d := range []string{readDir, writeDir} {
		must(t, os.Mkdir(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "file"), []byte("x\n"), 0o644))
		must(t, os.WriteFile(filepath.Join(d, "secret.key"), []byte("x\n"), 0o644))
		copyTrue(t, filepath.Join(d, "true"))
	}
	for _, tc := range []struct {
		name, preset string
		edit         func(*profile.Spec)
	}{
		{name: "workspace", preset: "workspace"},
		{name: "strict", preset: "strict"},
		{name: "read-only", preset: "read-only"},
		{name: "allow-read-write-deny", preset: "workspace", edit: func(s *profile.Spec) {
			s.Filesystem.Read = append(s.Filesystem.Read, readDir)
			s.Filesystem.Write = append(s.Filesystem.Write, writeDir)
			s.Filesystem.Deny = append(s.Filesystem.Deny, "*.key", "/etc/host*")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := sandboxtest.New(t, tc.preset, sandboxtest.Workspace(t), tc.edit)
			copyTrue(t, filepath.Join(sb.Workspace, "true"))
			paths := []string{"/", "/usr", "/usr/bin", "/bin", "/bin/true", "/usr/bin/true", "/lib", "/sbin",
				"/proc/self/status", "/dev", "/dev/null", "/dev/zero", "/dev/shm", "/dev/pts", "/tmp", sb.Workspace,
				filepath.Join(sb.Workspace, "true"), readDir, writeDir}
			for _, d := range []string{readDir, writeDir} {
				paths = append(paths, filepath.Join(d, "file"), filepath.Join(d, "secret.key"), filepath.Join(d, "true"))
			}
			p := sandboxtest.Probe{Args: sandboxtest.Sh(domainProbe, paths...)}
			restore := sandbox.LandlockAsListsForTest(true)
			before := sb.Run(t, p)
			restore()
			after := sb.Run(t, p)
			if before.ExitCode != 0 || after.ExitCode != 0 {
				t.Fatalf("the probe failed: before %s\nafter %s", before, after)
			}
			// The probe must see both answers, or it proves nothing.
			for _, want := range []string{"/etc/passwd r", "/proc/self/status r", "/usr/bin/true r-x"} {
				if !strings.Contains(before.Stdout, want+"\n") && !strings.Contains(before.Stdout, want) {
					t.Fatalf("positive control failed: %q not in the probe's answers under the lists\n%s", want, before.Stdout)
				}
			}
			if sandboxtest.Exists("/etc/shadow") && !strings.Contains(before.Stdout, "/etc/shadow -") {
				t.Fatalf("control failed: /etc/shadow is readable under the lists\n%s", before.Stdout)
			}
			b, a := strings.Split(before.Stdout, "\n"), strings.Split(after.Stdout, "\n")
			if len(b) != len(a) {
				t.Fatalf("the probe saw %d paths under the lists and %d under the plan\nbefore:\n%s\nafter:\n%s", len(b), len(a), before.Stdout, after.Stdout)
			}
			for i := range b {
				if b[i] != a[i] {
					t.Errorf("ACCESS CHANGED: %q under the lists, %q under the planned rules", b[i], a[i])
				}
			}
		})
	}
}

func copyTrue(t *testing.T, dst string) {
	t.Helper()
	b, err := os.ReadFile("/usr/bin/true")
	must(t, err)
	must(t, os.WriteFile(dst, b, 0o755))
}
