package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// execProbe copies a real program (touch) somewhere writable and runs it
// there to create the marker file $MARK: $1 says where ($DROP, a
// directory), $2 how. The evidence is the marker in the workspace, which
// only the program, had it run, would have made.
const execProbe = `
set -u
x="$DROP/x-$$"
cp /usr/bin/touch "$x" && chmod 755 "$x" || exit 3
case "$1" in
direct) "$x" "$MARK" ;;
ldso) "$LDSO" "$x" "$MARK" ;;
esac
`

// anonExecProbe runs touch from files that have no path a rule could
// name: a memfd (execve of /proc/self/fd/N, execveat AT_EMPTY_PATH, the
// dynamic loader on /proc/self/fd/N), an O_TMPFILE file and an unlinked
// file in $DROP (the loader on /proc/self/fd/N).
const anonExecProbe = `
import os, sys
how, mark, drop, ldso = sys.argv[1], os.environ["MARK"], os.environ["DROP"], os.environ["LDSO"]
prog = open("/usr/bin/touch", "rb").read()
if how.startswith("memfd"):
    fd = os.memfd_create("x", 0)
    os.write(fd, prog)
elif how == "otmpfile":
    fd = os.open(drop, os.O_TMPFILE | os.O_RDWR, 0o755)
    os.write(fd, prog)
else:
    path = os.path.join(drop, "deleted-%d" % os.getpid())
    with open(path, "wb") as f:
        f.write(prog)
    os.chmod(path, 0o755)
    fd = os.open(path, os.O_RDONLY)
    os.unlink(path)
os.set_inheritable(fd, True)
link = "/proc/self/fd/%d" % fd
if how == "memfd/execve":
    os.execv(link, ["x", mark])
elif how == "memfd/execveat":
    os.execve(fd, ["x", mark], dict(os.environ))
else:
    os.execv(ldso, [ldso, link, mark])
`

// The strict preset promises that programs run only from the system
// paths and the workspace. A program dropped in the private tmp, HOME or
// /dev/shm must not run directly, through the dynamic loader (which maps
// it with mmap(PROT_EXEC), unchecked by Landlock), or from an anonymous
// or unlinked file. Each case runs on the host (the program runs), in
// the workspace preset (it runs: nothing but the strict rule stops it)
// and in the strict preset, where the marker must not appear.
func TestAttackStrictExec(t *testing.T) {
	ldso := dynamicLoader(t)
	ws := sandboxtest.Workspace(t)
	strict := sandboxtest.New(t, "strict", ws, nil)
	open := sandboxtest.New(t, preset, ws, nil)
	if st := strict.Executor.Report().Status(profile.ExecBoundary); st.Status != sandbox.Enforced {
		t.Fatalf("strict's exec-boundary is %s (%s): the Report must say why it is lower and this test expects it enforced here", st.Status, st.Reason)
	}
	type attack struct {
		name string
		args []string
		drop string // where the sandboxed probe drops the program
	}
	var attacks []attack
	for _, where := range []struct{ name, dir string }{{"tmp", "/tmp"}, {"home", "$HOME"}, {"dev-shm", "/dev/shm"}} {
		for _, how := range []string{"direct", "ldso"} {
			attacks = append(attacks, attack{where.name + "/" + how, sandboxtest.Sh(`DROP=$(eval echo "$DROP"); `+execProbe, how), where.dir})
		}
	}
	for _, how := range []string{"memfd/execve", "memfd/execveat", "memfd/ldso", "otmpfile", "deleted"} {
		attacks = append(attacks, attack{how, sandboxtest.Py(anonExecProbe, how), "/tmp"})
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			mark := filepath.Join(ws, "ran-"+filepath.Base(a.name))
			env := func(drop string) []string { return []string{"MARK=" + mark, "LDSO=" + ldso, "DROP=" + drop} }
			ran := func(o sandboxtest.Outcome, where string) bool {
				t.Helper()
				ok := sandboxtest.Exists(mark)
				os.Remove(mark)
				if ok {
					t.Logf("%s: the dropped program ran", where)
				}
				return ok
			}
			host := sandboxtest.Probe{Args: a.args, Env: env(t.TempDir())}
			if o := open.Host(t, host); !ran(o, "host") {
				t.Fatalf("positive control failed: the probe did not run the program on the host\n%s", o)
			}
			in := sandboxtest.Probe{Args: a.args, Env: env(a.drop)}
			if o := open.Run(t, in); !ran(o, "workspace preset") {
				t.Fatalf("positive control failed: the program did not run under the workspace preset, so the strict run would prove nothing\n%s", o)
			}
			o := strict.Run(t, in)
			if ran(o, "strict preset") {
				t.Errorf("ATTACK SUCCEEDED: a program dropped in %s ran under the strict preset (%s)\n%s", a.drop, a.name, o)
			}
		})
	}

	// Positive control for strict itself: a program in the workspace runs.
	t.Run("workspace-binary", func(t *testing.T) {
		mark := filepath.Join(ws, "ran-workspace")
		o := strict.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cp /usr/bin/touch ./tool && ./tool "$MARK" && "$LDSO" ./tool "$MARK.ldso"`),
			Env: []string{"MARK=" + mark, "LDSO=" + ldso}})
		if !sandboxtest.Exists(mark) || !sandboxtest.Exists(mark+".ldso") {
			t.Fatalf("a program in the workspace did not run under the strict preset, which allows it\n%s", o)
		}
	})
}

// dynamicLoader is the path of this host's ELF interpreter.
func dynamicLoader(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1", "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/lib/aarch64-linux-gnu/ld-linux-aarch64.so.1"} {
		if sandboxtest.Exists(p) {
			return p
		}
	}
	t.Skip("no dynamic loader at a known path on this host")
	return ""
}
