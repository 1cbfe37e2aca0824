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

// bareConfig is a config that makes host git in the directory holding it
// run $fsm: a bare repository pointed at a working tree, with an
// fsmonitor.
const bareConfig = `printf '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = %s\n' "$fsm"`

// TestAttackGitDirAnyName: a run cannot make a directory host git takes
// for a git directory under any name: no .git is ever made, but a HEAD
// (with objects and refs) in any directory is one (git init --bare).
// The evidence is host git after the run, in the directory the route
// made: `git status` and a commit there must not run the planted
// fsmonitor. The control runs the same script on the host and must.
func TestAttackGitDirAnyName(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, ws string)
		script string // after gitPrelude, in the workspace
		dir    string // where host git runs, workspace-relative
	}{
		{name: "git-init-bare-in-a-directory", dir: "d",
			script: `mkdir d && cd d && git init -q --bare . ; git config core.bare false; git config core.worktree ..; git config core.fsmonitor "$fsm"`},
		{name: "git-init-bare-at-the-top", dir: ".",
			setup:  func(t *testing.T, ws string) { os.RemoveAll(filepath.Join(ws, ".git")) },
			script: `git init -q --bare . ; git config core.bare false; git config core.worktree .; git config core.fsmonitor "$fsm"`},
		{name: "by-hand", dir: "d",
			script: `mkdir -p d/objects d/refs; echo 'ref: refs/heads/main' > d/HEAD; ` + bareConfig + ` > d/config`},
		{name: "head-renamed-into-place", dir: "d",
			script: `mkdir -p d/objects d/refs; echo 'ref: refs/heads/main' > d/h; mv d/h d/HEAD; ` + bareConfig + ` > d/config`},
		{name: "head-symlink", dir: "d",
			script: `mkdir -p d/objects d/refs; ln -s refs/heads/main d/HEAD; ` + bareConfig + ` > d/config`},
		{name: "head-hard-link", dir: "d",
			script: `mkdir -p d/objects d/refs; echo 'ref: refs/heads/main' > h; ln h d/HEAD; ` + bareConfig + ` > d/config`},
		{name: "copied-from-the-private-tmp", dir: "d",
			script: `b=$(mktemp -d) && git init -q --bare "$b" && ` + bareConfig + ` > "$b/config"; cp -r "$b" d || mv "$b" d`},
		{name: "objects-beside-an-existing-head", dir: "d",
			setup: func(t *testing.T, ws string) {
				must(t, os.MkdirAll(filepath.Join(ws, "d"), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, "d", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
			},
			script: `mkdir -p d/objects d/refs; ` + bareConfig + ` > d/config`},
	} {
		for _, guard := range []bool{true, false} {
			name := tc.name
			if !guard {
				// The backstop, on a host without the guard: the end of
				// the run moves the new git directory's HEAD aside.
				name += "/without-create-guard"
			}
			t.Run(name, func(t *testing.T) {
				if !guard {
					t.Cleanup(sandbox.SetCreateGuardForTest(false))
				}
				attackGitDir(t, tc.setup, tc.script, tc.dir, guard)
			})
		}
	}
}

func attackGitDir(t *testing.T, setup func(t *testing.T, ws string), script, rel string, guard bool) {
	tc := struct {
		setup  func(t *testing.T, ws string)
		script string
		dir    string
	}{setup, script, rel}
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	if tc.setup != nil {
		tc.setup(t, ws)
	}
	sb := sandboxtest.New(t, preset, ws, nil)
	if guard && sb.Degraded(profile.ProtectedPaths) {
		t.Skip("no create guard on this host")
	}
	marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
	dir := filepath.Join(ws, tc.dir)
	p := sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.script, marker)}
	o := sb.Run(t, p)
	if hostGitRuns(marker, []string{dir}) {
		t.Errorf("ATTACK SUCCEEDED: host git in %s ran the program the run planted\n%s\ndenials %+v", tc.dir, o, o.Result.Denials)
	}
	denied := false
	for _, d := range o.Result.Denials {
		denied = denied || guard && strings.Contains(d.Reason, "protected name") || !guard && strings.HasSuffix(d.Target, "/HEAD") && strings.Contains(d.Reason, "moved to")
	}
	if !denied {
		t.Errorf("no denial names the refused git directory: %+v\n%s", o.Result.Denials, o)
	}
	// Control: the same script on the host makes a git directory
	// host git runs the marker from.
	if tc.dir != "." {
		os.RemoveAll(dir)
	}
	os.Remove(filepath.Join(ws, "h"))
	if tc.setup != nil {
		tc.setup(t, ws)
	}
	sb.Host(t, p)
	if !hostGitRuns(marker, []string{dir}) {
		t.Fatalf("positive control failed: the script on the host did not make host git in %s run the marker: %s", tc.dir, gitRun(dir, "status"))
	}
}

// TestAttackGitDirKeepsOrdinaryGit: ordinary git in a repository there at
// the start still works in the run (HEAD, refs/remotes/*/HEAD, logs/HEAD
// are made beneath its git directory), and so does a new repository in
// the sandbox's own /tmp; a file named HEAD beside no git directory is
// refused, and said so.
func TestAttackGitDirKeepsOrdinaryGit(t *testing.T) {
	ws := sandboxtest.GitWorkspace(t)
	remote := sandboxtest.GitWorkspace(t)
	gitSetup(t, remote, "commit", "-q", "--allow-empty", "-m", "remote")
	gitSetup(t, ws, "remote", "add", "origin", remote)
	sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) { s.Filesystem.Read = append(s.Filesystem.Read, remote) })
	if sb.Degraded(profile.ProtectedPaths) {
		t.Skip("no create guard on this host")
	}
	script := `set -e
g() { git -c user.name=a -c user.email=a@b.c -c protocol.file.allow=always "$@"; }
echo one > f && g add f && g commit -q -m one
g branch side && g checkout -q side && echo two >> f && g commit -q -am two && g checkout -q -
g stash list >/dev/null && echo three >> f && g stash -q && g stash pop -q && g checkout -q -- f
g tag t1 && g symbolic-ref HEAD refs/heads/side && g symbolic-ref HEAD refs/heads/master 2>/dev/null || g symbolic-ref HEAD refs/heads/main
g fetch -q origin && g remote set-head origin -a >/dev/null && echo fetched
g status --porcelain
g init -q /tmp/r && g -C /tmp/r commit -q --allow-empty -m tmp && echo tmp-repo
echo done
if echo x > HEAD 2>/dev/null; then echo made-HEAD; fi`
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(script)})
	for _, want := range []string{"fetched", "tmp-repo", "done"} {
		if !strings.Contains(o.Stdout, want) {
			t.Errorf("%q missing from the run's output\n%s", want, o)
		}
	}
	if strings.Contains(o.Stdout, "made-HEAD") || sandboxtest.Exists(filepath.Join(ws, "HEAD")) {
		t.Errorf("a HEAD beside no git directory was made\n%s", o)
	}
	if got := gitRun(ws, "log", "--format=%s", "side"); !strings.Contains(got, "two") {
		t.Errorf("host git does not see the run's commit on side: %q", got)
	}
	if got := gitRun(ws, "tag"); !strings.Contains(got, "t1") {
		t.Errorf("host git does not see the run's tag: %q", got)
	}
	if !sandboxtest.Exists(filepath.Join(ws, ".git", "refs", "remotes", "origin", "HEAD")) {
		t.Error("refs/remotes/origin/HEAD was not made")
	}
	var others int
	for _, d := range o.Result.Denials {
		if filepath.Base(d.Target) != "HEAD" {
			others++
		}
	}
	if others > 0 {
		t.Errorf("ordinary git was refused: %+v", o.Result.Denials)
	}
}

// TestAttackGitStateInProgress: a run that leaves a rebase stopped with
// an exec line still to do (by git itself, or written by hand) leaves
// host git nothing to go on with: after the run, `git rebase --continue`
// on the host runs no program of the run's.
// A rebase the run finishes is kept, with no denial. The control runs
// the same script on the host and the marker appears.
func TestAttackGitStateInProgress(t *testing.T) {
	// The sequence editor writes the todo list: stop at once, then exec.
	const rebase = `git -c sequence.editor="printf 'break\nexec $fsm\n' >" rebase -q -i HEAD >/dev/null 2>&1; test -d .git/rebase-merge && echo stopped`
	for _, tc := range []struct {
		name, script string
		host         []string // the host git command that would go on with it
	}{
		{name: "rebase-merge-exec", script: rebase, host: []string{"rebase", "--continue"}},
		{name: "rebase-merge-by-hand", host: []string{"rebase", "--continue"},
			script: `mkdir -p .git/rebase-merge && cd .git/rebase-merge && git rev-parse HEAD > orig-head && git rev-parse HEAD > onto && echo refs/heads/main > head-name && : > interactive && : > done && printf 'exec %s\n' "$fsm" > git-rebase-todo && : > quiet && echo stopped`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			gitSetup(t, ws, "branch", "-M", "main")
			gitSetup(t, ws, "commit", "-q", "--allow-empty", "-m", "two")
			sb := sandboxtest.New(t, preset, ws, nil)
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			p := sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.script, marker)}
			o := sb.Run(t, p)
			if !strings.Contains(o.Stdout, "stopped") {
				t.Fatalf("the run did not leave the operation in progress\n%s", o)
			}
			os.Remove(marker)
			out := gitRun(ws, tc.host...)
			if sandboxtest.Exists(marker) {
				t.Errorf("ATTACK SUCCEEDED: host git %v ran the program the run planted: %s\n%s", tc.host, out, o)
			}
			moved := false
			for _, d := range o.Result.Denials {
				moved = moved || strings.Contains(d.Reason, "in progress")
			}
			if !moved {
				t.Errorf("no denial says the state was moved aside: %+v", o.Result.Denials)
			}
			// Control: the same script on the host leaves what host git
			// goes on with.
			gitRun(ws, "rebase", "--abort")
			gitRun(ws, "bisect", "reset")
			os.Remove(marker)
			sb.Host(t, p)
			gitRun(ws, tc.host...)
			if !sandboxtest.Exists(marker) {
				t.Fatalf("positive control failed: host git %v after the script on the host did not run the marker", tc.host)
			}
		})
	}
	t.Run("finished-rebase-is-kept", func(t *testing.T) {
		ws := sandboxtest.GitWorkspace(t)
		gitSetup(t, ws, "commit", "-q", "--allow-empty", "-m", "two")
		sb := sandboxtest.New(t, preset, ws, nil)
		o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`git -c sequence.editor="printf 'exec echo ran-exec > done.txt\n' >" rebase -q -i HEAD && git -c user.name=a -c user.email=a@b.c commit -q --allow-empty -m three && echo finished`)})
		if !strings.Contains(o.Stdout, "finished") || len(o.Result.Denials) != 0 {
			t.Errorf("a rebase finished in the run failed or was refused: %+v\n%s", o.Result.Denials, o)
		}
		if got := gitRun(ws, "log", "-1", "--format=%s"); strings.TrimSpace(got) != "three" {
			t.Errorf("host git after the run: %q", got)
		}
	})
}
