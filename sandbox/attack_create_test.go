package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// createPrelude makes, in the sandbox's own temp directory, a repository
// whose config runs the marker program (core.fsmonitor), and copies its
// git directory into the workspace as sub/evil.git, under a harmless
// name: each route below then gives it, or a pointer to it, the name
// .git.
const createPrelude = gitPrelude + `e=$(mktemp -d) && git init -q "$e" && git -C "$e" config core.fsmonitor "$fsm" && mkdir -p sub && cp -r "$e/.git" sub/evil.git; `

// waitReady waits for the run to touch ws/ready.
func waitReady(t *testing.T, r *sandboxtest.Running, ws string) {
	t.Helper()
	for i := 0; i < 400 && !sandboxtest.Exists(filepath.Join(ws, "ready")); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !sandboxtest.Exists(filepath.Join(ws, "ready")) {
		r.Kill()
		t.Fatalf("the run never got ready\n%s", r.Wait())
	}
}

// TestAttackNestedGitCreation: a .git the run makes beneath the top of
// the workspace (a directory or a gitfile, by each call that makes a
// name) would have host git in sub/ run the planted fsmonitor while the
// run still goes on. The create guard refuses each one when it is made.
// Evidence: host git status and commit in sub/ during the run, and
// sub/.git itself; the control runs the same routes on the host.
func TestAttackNestedGitCreation(t *testing.T) {
	for _, tc := range []struct{ name, route string }{
		{"mkdir", `mkdir sub/.git && cp -r sub/evil.git/. sub/.git/`},
		{"gitfile-open-creat", `printf 'gitdir: evil.git\n' > sub/.git`},
		{"rename-dir", `cp -r sub/evil.git sub/d && mv sub/d sub/.git`},
		{"rename-file", `printf 'gitdir: evil.git\n' > sub/g && mv sub/g sub/.git`},
		{"symlinkat", `ln -s evil.git sub/.git`},
		{"linkat", `printf 'gitdir: evil.git\n' > sub/g && ln sub/g sub/.git`},
		{"creat-through-dangling-symlink", `ln -s .git sub/x && printf 'gitdir: evil.git\n' > sub/x`},
		{"creat-through-symlink-chain", `ln -s y sub/x && ln -s ../sub/.git sub/y && printf 'gitdir: evil.git\n' > sub/x`},
		{"python-openat", `python3 -c 'import os; os.close(os.open("sub/.git", os.O_CREAT|os.O_WRONLY, 0o644))' && printf 'gitdir: evil.git\n' > sub/.git`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			sb := sandboxtest.New(t, preset, ws, nil)
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			sub := filepath.Join(ws, "sub")
			r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(createPrelude+tc.route+`; touch ready; sleep 30`, marker)})
			waitReady(t, r, ws)
			_, lerr := os.Lstat(filepath.Join(sub, ".git"))
			ran := hostGitRuns(marker, []string{sub})
			r.Kill()
			o := r.Wait()
			if lerr == nil {
				t.Errorf("ATTACK SUCCEEDED: sub/.git exists on the host during the run\n%s", o)
			}
			if ran {
				t.Errorf("ATTACK SUCCEEDED: host git in sub/ during the run ran the planted fsmonitor\n%s", o)
			}
			denied := false
			for _, d := range o.Result.Denials {
				denied = denied || strings.Contains(d.Target, ".git") && strings.Contains(d.Reason, "protected name")
			}
			if !denied {
				t.Errorf("no denial names the refused .git: %+v", o.Result.Denials)
			}
			// Control: the same route on the host makes host git in sub/
			// run the marker.
			os.RemoveAll(sub)
			os.Remove(filepath.Join(ws, "ready"))
			sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(createPrelude+tc.route, marker)})
			if !hostGitRuns(marker, []string{sub}) {
				t.Fatalf("positive control failed: the route run on the host did not make host git in sub/ run the marker: %s", gitRun(sub, "status"))
			}
		})
	}
}

// createRaceProbe flips a path buffer between sub/aaaa and sub/.git in
// one thread while another calls mkdir on it in a loop: a guard that
// checked the path and then let the kernel read it again would make
// sub/.git some of the time.
const createRaceProbe = `
import ctypes, os, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
os.makedirs("sub", exist_ok=True)
buf = ctypes.create_string_buffer(b"sub/aaaa", 16)
names = [b"sub/aaaa", b"sub/.git"]
stop = False
def flip():
    i = 0
    while not stop:
        i ^= 1
        ctypes.memmove(buf, names[i], 8)
threading.Thread(target=flip, daemon=True).start()
made = refused = 0
end = time.time() + 2
while time.time() < end:
    if libc.mkdir(buf, 0o755) == 0:
        made += 1
        try:
            os.rmdir("sub/aaaa")
        except OSError:
            pass
    else:
        refused += 1
stop = True
print("mkdirs: %d made, %d refused" % (made, refused), flush=True)
open("ready", "w").close()
time.sleep(30)
`

// TestAttackCreateGuardRace: the guard carries out the path it checked,
// so rewriting the buffer during the check never makes sub/.git.
func TestAttackCreateGuardRace(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	ws := sb.Workspace
	// Control: on the host, the race makes sub/.git.
	host := sandboxtest.Probe{Args: sandboxtest.Py(strings.Replace(createRaceProbe, "time.sleep(30)", "", 1))}
	requireControl(t, sb.Host(t, host), "mkdirs:")
	if !sandboxtest.Exists(filepath.Join(ws, "sub", ".git")) {
		t.Fatal("positive control failed: the racing probe made no sub/.git on the host")
	}
	must(t, os.RemoveAll(filepath.Join(ws, "sub")))
	os.Remove(filepath.Join(ws, "ready"))
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Py(createRaceProbe)})
	waitReady(t, r, ws)
	_, lerr := os.Lstat(filepath.Join(ws, "sub", ".git"))
	r.Kill()
	o := r.Wait()
	if lerr == nil {
		t.Errorf("ATTACK SUCCEEDED: a racing mkdir made sub/.git on the host\n%s", o)
	}
	if m, _ := filepath.Glob(filepath.Join(ws, "sub", ".git*")); len(m) > 0 {
		t.Errorf("ATTACK SUCCEEDED: %v after the run", m)
	}
	if !strings.Contains(o.Stdout, "mkdirs:") || strings.Contains(o.Stdout, " 0 made") {
		t.Errorf("the racing probe did not run (or made nothing) in the sandbox\n%s", o)
	}
	t.Logf("sandbox: %s", strings.TrimSpace(o.Stdout))
}

// TestAttackMissingHooksDirectory: a repository without .git/hooks
// (absent at the start, inside a directory that existed) cannot get one
// during the run, so host git commit runs no hook the run wrote.
func TestAttackMissingHooksDirectory(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	must(t, os.RemoveAll(filepath.Join(ws, ".git", "hooks")))
	sb := sandboxtest.New(t, preset, ws, nil)
	marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
	route := `mk "$PWD/.git/hooks/pre-commit" 2>/dev/null; mk "$PWD/.git/hooks/post-commit" 2>/dev/null; `
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+route+`touch ready; sleep 30`, marker)})
	waitReady(t, r, ws)
	ran := hostGitRuns(marker, []string{ws})
	_, lerr := os.Lstat(filepath.Join(ws, ".git", "hooks"))
	r.Kill()
	o := r.Wait()
	if ran || lerr == nil {
		t.Errorf("ATTACK SUCCEEDED: the run made .git/hooks (%v) or host git ran its hook (%v)\n%s", lerr == nil, ran, o)
	}
	os.Remove(filepath.Join(ws, "ready"))
	sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+route, marker)})
	if !hostGitRuns(marker, []string{ws}) {
		t.Fatal("positive control failed: the hooks written on the host did not run on commit")
	}
}

// TestAttackWorkspaceModeDuringRun: chmod 0777 and chown of the
// workspace, or of a write path, are refused while the run goes on (a
// mode the end of the run puts back would let any local user write in
// meanwhile).
func TestAttackWorkspaceModeDuringRun(t *testing.T) {
	extra := sandboxtest.Workspace(t)
	sb, _ := attackTarget(t, func(s *profile.Spec) { s.Filesystem.Write = append(s.Filesystem.Write, extra) })
	ws := sb.Workspace
	mode := func(p string) os.FileMode {
		fi, err := os.Stat(p)
		must(t, err)
		return fi.Mode().Perm()
	}
	before, beforeExtra := mode(ws), mode(extra)
	script := `chmod 0777 . "$1"; chmod 0777 "$PWD/"; chown "$(id -u):$(id -g)" .; python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.fchmod(fd, 0o777)' "$1"; touch ready; sleep 30`
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(script, extra)})
	waitReady(t, r, ws)
	during, duringExtra := mode(ws), mode(extra)
	r.Kill()
	o := r.Wait()
	if during != before || duringExtra != beforeExtra {
		t.Errorf("ATTACK SUCCEEDED: during the run the workspace is %v (was %v), the write path %v (was %v)\n%s", during, before, duringExtra, beforeExtra, o)
	}
	// Ordinary chmod inside the workspace still works.
	if o2 := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`mkdir -p d && chmod 0700 d && stat -c %a d`)}); !strings.Contains(o2.Stdout, "700") {
		t.Errorf("chmod beneath the workspace failed in the run\n%s", o2)
	}
	// Control: the script on the host changes both.
	sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(strings.TrimSuffix(script, "touch ready; sleep 30"), extra)})
	if mode(ws) == before || mode(extra) == beforeExtra {
		t.Fatal("positive control failed: chmod on the host did not change the modes")
	}
	os.Chmod(ws, before)
	os.Chmod(extra, beforeExtra)
}

// TestAttackCreateGuardKeepsOrdinaryWork: what build tools and shells do keeps
// working under the guard: files, directories, renames, links, fifos,
// O_CREAT through a symlink to an ordinary name, redirections to
// /dev/stdout and /dev/fd/N, a repository in the sandbox's own /tmp.
func TestAttackCreateGuardKeepsOrdinaryWork(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	ws := sb.Workspace
	script := `set -e
mkdir -p a/b/c && echo one > a/b/c/f && mv a/b/c/f a/b/c/g && ln a/b/c/g a/h && ln -s c/g a/b/l
ln -s new.txt a/dangling && echo through > a/dangling
mkfifo a/p && cp -r a z && chmod 600 z/h && touch -c z/h && : > a/b/empty
echo to-stdout > /dev/stdout && echo to-fd1 > /dev/fd/1 && echo to-proc >> /proc/self/fd/1
cd a/b && echo rel > rel.txt && cd "$OLDPWD"
umask 077 && mkdir private && echo x > private/f
git init -q /tmp/r && git -C /tmp/r -c user.name=a -c user.email=a@b.c commit -q --allow-empty -m one && echo tmp-repo
echo done`
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(script)})
	for _, want := range []string{"to-stdout", "to-fd1", "to-proc", "tmp-repo", "done"} {
		if !strings.Contains(o.Stdout, want) {
			t.Errorf("%q missing from the run's output\n%s", want, o)
		}
	}
	for path, content := range map[string]string{"a/b/c/g": "one\n", "a/h": "one\n", "a/new.txt": "through\n", "a/b/rel.txt": "rel\n", "z/b/l": "one\n", "private/f": "x\n"} {
		if data, err := os.ReadFile(filepath.Join(ws, path)); err != nil || string(data) != content {
			t.Errorf("%s on the host: %q, %v", path, data, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(ws, "private")); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the run's umask was not applied: %v %v", fi, err)
	}
	if len(o.Result.Denials) != 0 {
		t.Errorf("ordinary work was refused: %+v", o.Result.Denials)
	}
}

// BenchmarkCreateGuard times a run that creates 2000 files (open with
// O_CREAT, each a round trip through the supervisor and the proxy) with
// and without the guard, one that opens 2000 existing files for writing
// without O_CREAT (stopped too: a git directory's config opened "r+" is
// refused when the call comes), and one that opens them read-only
// (never stopped).
//
//	go test -run '^$' -bench CreateGuard -benchtime 5x ./sandbox/
func BenchmarkCreateGuard(b *testing.B) {
	const create = `import os
os.makedirs("d", exist_ok=True)
for i in range(2000):
    os.close(os.open("d/f%d" % i, os.O_CREAT|os.O_WRONLY|os.O_TRUNC, 0o644))`
	const open = `import os
for i in range(2000):
    os.close(os.open("d/f%d" % i, os.O_RDONLY))`
	const write = `import os
for i in range(2000):
    os.close(os.open("d/f%d" % i, os.O_RDWR))`
	for _, c := range []struct {
		name  string
		src   string
		guard bool
	}{{"create/guard", create, true}, {"create/no-guard", create, false}, {"write/guard", write, true}, {"write/no-guard", write, false}, {"open/guard", open, true}, {"open/no-guard", open, false}} {
		b.Run(c.name, func(b *testing.B) {
			restore := sandbox.SetCreateGuardForTest(c.guard)
			defer restore()
			s := profile.Preset(profile.DefaultPreset)
			s.Workspace = b.TempDir()
			p, err := profile.New(s)
			if err != nil {
				b.Fatal(err)
			}
			ex, err := sandbox.New(p)
			if err != nil {
				b.Skip(err)
			}
			b.Cleanup(func() { ex.Close() })
			cmd := sandbox.Cmd{Args: []string{sandboxtest.Python, "-c", create}}
			if res, err := ex.Run(context.Background(), cmd); err != nil || res.Status != sandbox.StatusSucceeded {
				b.Fatalf("%v %+v", err, res)
			}
			cmd.Args[2] = c.src
			for b.Loop() {
				res, err := ex.Run(context.Background(), cmd)
				if err != nil || res.Status != sandbox.StatusSucceeded {
					b.Fatalf("%v %s %s", err, res.Status, res.Stderr)
				}
			}
		})
	}
}

// TestAttackIncludeTarget: an include.path target absent at the start
// cannot be made during the run, neither in place nor by moving the
// directory that holds it away and making it again (a new directory has
// a new inode, where a check by inode alone would see another place).
func TestAttackIncludeTarget(t *testing.T) {
	for _, tc := range []struct{ name, route string }{
		{"in-place", `printf '[core]\n\tfsmonitor = %s\n' "$fsm" > conf/extra`},
		{"moved-directory", `mv conf conf.old && mkdir conf; printf '[core]\n\tfsmonitor = %s\n' "$fsm" > conf/extra`},
		{"renamed-over", `mkdir -p c2 && printf '[core]\n\tfsmonitor = %s\n' "$fsm" > c2/extra && rm -rf conf && mv c2 conf`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			must(t, os.Mkdir(filepath.Join(ws, "conf"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "conf", "keep"), []byte("x"), 0o644))
			gitSetup(t, ws, "config", "include.path", "../conf/extra")
			sb := sandboxtest.New(t, preset, ws, nil)
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.route+`; touch ready; sleep 30`, marker)})
			waitReady(t, r, ws)
			ran := hostGitRuns(marker, []string{ws})
			r.Kill()
			o := r.Wait()
			if ran {
				t.Errorf("ATTACK SUCCEEDED: host git during the run read the include the run made\n%s", o)
			}
			// Control: the route on the host.
			os.Remove(filepath.Join(ws, "ready"))
			os.RemoveAll(filepath.Join(ws, "conf.old"))
			os.MkdirAll(filepath.Join(ws, "conf"), 0o755)
			sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.route, marker)})
			if !hostGitRuns(marker, []string{ws}) {
				t.Fatalf("positive control failed: the include written on the host did not run: %s", gitRun(ws, "status"))
			}
		})
	}
}
