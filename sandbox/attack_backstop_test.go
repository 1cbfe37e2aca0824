package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// TestAttackBackstopFollowsSymlink: the end-of-run check must never act
// on a path outside the workspace. The run points protected names at a
// directory outside (which it cannot even see) through symlinks; the
// check must move the symlinks aside, never what they point at.
func TestAttackBackstopFollowsSymlink(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	outside := sandboxtest.OutsideDir(t)
	for _, p := range []string{"config", "hooks/pre-commit", "modules/x/hooks/post-checkout", "settings.json"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(outside, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(outside, p), []byte("outside\n"), 0o644))
	}
	want := outsideState(outside)
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`ln -s "$1" .git; ln -s "$1" .claude; ln -s "$1" .vscode; ls -la`, outside)}
	o := sb.Run(t, p)
	if got := outsideState(outside); got != want {
		t.Errorf("ATTACK SUCCEEDED: the check changed files outside the workspace:\nbefore %s\nafter  %s\n%s\ndenials %+v", want, got, o, o.Result.Denials)
	}
	for _, name := range []string{".git", ".claude", ".vscode"} {
		if sandboxtest.Exists(filepath.Join(sb.Workspace, name)) {
			t.Errorf("the symlink %s the run planted is still in the workspace", name)
		}
	}
	// Control: the host can plant the same symlinks, and through them
	// reach the files outside.
	requireControl(t, sb.Host(t, p), "")
	if _, err := os.Stat(filepath.Join(sb.Workspace, ".git", "config")); err != nil {
		t.Fatalf("positive control failed: .git/config does not lead outside: %v", err)
	}
}

// TestAttackBackstopNestedSymlink: the end-of-run check is what is left
// where the create guard cannot run (an old kernel), and with the guard
// on nothing reaches it. So this runs with the guard off: a nested .git
// symlinked outside is moved aside at the end, and what it points at is
// never touched.
func TestAttackBackstopNestedSymlink(t *testing.T) {
	restore := sandbox.SetCreateGuardForTest(false)
	defer restore()
	sb, _ := attackTarget(t, nil)
	outside := sandboxtest.OutsideDir(t)
	must(t, os.WriteFile(filepath.Join(outside, "config"), []byte("outside\n"), 0o644))
	want := outsideState(outside)
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`mkdir -p sub && ln -s "$1" sub/.git`, outside)}
	o := sb.Run(t, p)
	if got := outsideState(outside); got != want {
		t.Errorf("ATTACK SUCCEEDED: the check changed files outside the workspace:\nbefore %s\nafter  %s\n%s", want, got, o)
	}
	if sandboxtest.Exists(filepath.Join(sb.Workspace, "sub", ".git")) {
		t.Errorf("the symlink sub/.git the run planted is still in the workspace: %s", o)
	}
	moved := false
	for _, d := range o.Result.Denials {
		moved = moved || strings.Contains(d.Target, "sub/.git")
	}
	if !moved {
		t.Errorf("no denial names the moved sub/.git: %+v", o.Result.Denials)
	}
	// Control: the host can plant the same symlink, and through it reach
	// the file outside.
	must(t, os.RemoveAll(filepath.Join(sb.Workspace, "sub")))
	requireControl(t, sb.Host(t, p), "")
	if _, err := os.Stat(filepath.Join(sb.Workspace, "sub", ".git", "config")); err != nil {
		t.Fatalf("positive control failed: sub/.git/config does not lead outside: %v", err)
	}
}

func outsideState(dir string) string {
	var s string
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil {
			s += path + "|" + sandboxtest.FileState(path) + ";"
		}
		return nil
	})
	return s
}

// TestAttackBackstopPermissions: the run makes what it planted
// unreadable (chmod 000) or unsearchable (chmod 666) to the check. What
// it created is still moved aside; where the check cannot look at all (an
// existing directory made unsearchable, unprivileged), the run fails
// instead of passing what it cannot see.
func TestAttackBackstopPermissions(t *testing.T) {
	t.Run("created-then-hidden", func(t *testing.T) {
		sandboxtest.PlantSecrets(t)
		ws := sandboxtest.GitWorkspace(t)
		sb := sandboxtest.New(t, preset, ws, nil)
		marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
		script := gitPrelude + `t=$(mktemp -d) && cp -r .git/. "$t"/ && rm -rf "$t"/modules* && mkdir -p .git/modules && cp -r "$t" .git/modules/x && git --git-dir=.git/modules/x config core.fsmonitor "$fsm"; mkdir x && echo "gitdir: ../.git/modules/x" > x/.git; mk .vscode/run.sh; chmod 000 .git/modules .vscode; chmod 666 x`
		p := sandboxtest.Probe{Args: sandboxtest.Sh(script, marker, "")}
		proc, err := sb.Executor.Prepare(t.Context(), sandbox.Cmd{Args: p.Args})
		must(t, err)
		must(t, proc.Start())
		res, err := proc.Wait()
		t.Cleanup(func() { chmodAll(ws) })
		// Unprivileged, the check cannot search x (chmod 666) to look at
		// x/.git: the run fails, and the next start checks again.
		if err != nil && !errors.Is(err, sandbox.ErrProtectCheck) {
			t.Fatal(err)
		}
		if err != nil && (!sandboxtest.Unprivileged() || res.Status == sandbox.StatusSucceeded) {
			t.Errorf("check failed as root, or the run succeeded: %v, %s", err, res.Status)
		}
		for _, name := range []string{".git/modules", ".vscode"} {
			if sandboxtest.Exists(filepath.Join(ws, name)) {
				t.Errorf("ATTACK SUCCEEDED: %s the run created and hid is still in place\ndenials %+v", name, res.Denials)
			}
		}
		chmodAll(ws)
		if _, err := sandbox.FinishInterruptedRuns(); err != nil {
			t.Errorf("the next start's check failed once x was searchable again: %v", err)
		}
		if sandboxtest.Exists(filepath.Join(ws, "x", ".git")) {
			t.Errorf("ATTACK SUCCEEDED: x/.git the run created and hid is still in place")
		}
		if hostGitRuns(marker, []string{filepath.Join(ws, "x")}) {
			t.Errorf("ATTACK SUCCEEDED: host git in x ran the planted fsmonitor")
		}
		must(t, os.RemoveAll(filepath.Join(ws, "x")))
		requireControl(t, sb.Host(t, p), "")
		chmodAll(ws)
		if !hostGitRuns(marker, []string{filepath.Join(ws, "x")}) {
			t.Fatalf("positive control failed: the script run on the host does not make host git in x run the marker program: %s", gitRun(filepath.Join(ws, "x"), "status"))
		}
	})
	t.Run("existing-directory-made-unsearchable", func(t *testing.T) {
		if !sandboxtest.Unprivileged() {
			t.Skip("root searches any directory: the unprivileged run of this test is the one that matters")
		}
		// The end-of-run check looks at a nested repository only
		// without the create guard (with it, the guard holds the
		// repository when a call comes and the check records nothing
		// beneath the top): that check must fail closed.
		t.Cleanup(sandbox.SetCreateGuardForTest(false))
		sandboxtest.PlantSecrets(t)
		ws := sandboxtest.GitWorkspace(t)
		gitSetup(t, ws, "init", "-q", "sub")
		sb := sandboxtest.New(t, preset, ws, nil)
		proc, err := sb.Executor.Prepare(t.Context(), sandbox.Cmd{Args: sandboxtest.Sh(`chmod 000 sub`)})
		must(t, err)
		must(t, proc.Start())
		res, err := proc.Wait()
		t.Cleanup(func() { chmodAll(ws); sandbox.FinishInterruptedRuns() })
		if !errors.Is(err, sandbox.ErrProtectCheck) || res.Status == sandbox.StatusSucceeded {
			t.Errorf("a check that could not look at sub/.git passed: err %v, status %s", err, res.Status)
		}
		// Control: the host, as this user, cannot search sub either.
		if _, err := os.Lstat(filepath.Join(ws, "sub", ".git")); !errors.Is(err, os.ErrPermission) {
			t.Fatalf("positive control failed: sub/.git is searchable on the host: %v", err)
		}
	})
}

// chmodAll makes every directory under dir searchable again, so the
// test can look and clean up.
func chmodAll(dir string) {
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil && fi == nil {
			return nil
		}
		if fi != nil && fi.IsDir() {
			os.Chmod(path, 0o755)
		}
		return nil
	})
	// Walk cannot enter a directory before its mode is fixed; a second
	// pass reaches what the first opened.
	filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if fi != nil && fi.IsDir() {
			os.Chmod(path, 0o755)
		}
		return nil
	})
}

// TestAttackSetuidFile: a file the run leaves in the workspace never
// carries the set-user-ID or set-group-ID bit, by any call that could
// set it, nor file capabilities. As root such a file, owned by root,
// would give any local user root after the run.
func TestAttackSetuidFile(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	const src = `
import os, sys
mode = 0o4755
def attempt(name, f):
    try:
        f()
        print("SET", name)
    except OSError as e:
        print("REFUSED", name, e.errno)
open("a", "w").close(); open("b", "w").close()
attempt("chmod", lambda: os.chmod("a", mode))
attempt("chmod-g", lambda: os.chmod("b", 0o2755))
fd = os.open("c", os.O_CREAT | os.O_WRONLY, 0o644); 
attempt("fchmod", lambda: os.fchmod(fd, mode))
attempt("open-creat", lambda: os.close(os.open("d", os.O_CREAT | os.O_WRONLY, mode)))
attempt("mknod", lambda: os.mknod("e", 0o100000 | mode))
attempt("mkdir-g", lambda: os.mkdir("f", 0o2755))
attempt("setcap", lambda: os.setxattr("a", "security.capability", bytes([1, 0, 0, 2, 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])))
`
	p := sandboxtest.Probe{Args: sandboxtest.Py(src)}
	o := sb.Run(t, p)
	check := func() []string {
		var bad []string
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			var st unix.Stat_t
			if unix.Lstat(filepath.Join(sb.Workspace, n), &st) == nil && st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 {
				bad = append(bad, n)
			}
		}
		if sz, err := unix.Getxattr(filepath.Join(sb.Workspace, "a"), "security.capability", nil); err == nil && sz > 0 {
			bad = append(bad, "a: security.capability")
		}
		return bad
	}
	if bad := check(); len(bad) > 0 {
		t.Errorf("ATTACK SUCCEEDED: set-id bits or capabilities on the host: %q\n%s", bad, o)
	}
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		os.Remove(filepath.Join(sb.Workspace, n))
	}
	requireControl(t, sb.Host(t, p), "SET chmod")
	if bad := check(); len(bad) < 3 {
		t.Fatalf("positive control failed: on the host only %q got set-id bits or capabilities", bad)
	}
}

// TestAttackWorkspaceMode: the run cannot leave the workspace's own mode
// changed (0777 would let any local user write into it).
func TestAttackWorkspaceMode(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	must(t, os.Chmod(sb.Workspace, 0o750))
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`chmod 0777 . && stat -c %a .`)}
	o := sb.Run(t, p)
	fi, err := os.Stat(sb.Workspace)
	must(t, err)
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("ATTACK SUCCEEDED: the workspace's mode is %o after the run\n%s", fi.Mode().Perm(), o)
	}
	requireControl(t, sb.Host(t, p), "777")
	os.Chmod(sb.Workspace, 0o750)
}
