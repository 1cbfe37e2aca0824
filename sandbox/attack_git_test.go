package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// gitPrelude defines, for every git attack script, mk (write an
// executable that touches the marker $1) and $fsm (such a program in the
// workspace, for core.fsmonitor), and names the second writable tree $2.
const gitPrelude = `m=$1; extra=$2; mk() { mkdir -p "$(dirname "$1")"; printf '#!/bin/sh\ntouch %s\n' "$m" > "$1"; chmod +x "$1"; }; mk "$PWD/evil.sh"; fsm="$PWD/evil.sh"; `

// gitRun runs git on the host in dir, as a later, unsandboxed tool does.
func gitRun(dir string, args ...string) string {
	cmd := exec.Command("git", append([]string{"-c", "user.name=host", "-c", "user.email=host@test.invalid", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return string(out)
}

func gitSetup(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=host", "-c", "user.email=host@test.invalid", "-c", "protocol.file.allow=always"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %q: %v\n%s", args, err, out)
	}
}

// hostGitRuns reports whether host git, in any of dirs, runs a program
// the run planted: `git status` (core.fsmonitor, includes, a replaced
// .git) and a commit (hooks, hooksPath) touch the marker if so.
func hostGitRuns(marker string, dirs []string) bool {
	os.Remove(marker)
	for _, d := range dirs {
		gitRun(d, "status")
		gitRun(d, "commit", "-q", "--allow-empty", "-m", "evidence")
	}
	return sandboxtest.Exists(marker)
}

// TestAttackGitRepositories: each route by which a run could leave host
// git a program to run, in a repository the workspace or a writable path
// holds at start. The evidence is the host's git itself, after the run:
// `git status` and a commit in each repository must not touch the marker.
// The control runs the same script on the host and must.
func TestAttackGitRepositories(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setup     func(t *testing.T, ws, extra string)
		writeRoot bool     // give extra to the run as a writable path
		script    string   // after gitPrelude, in the workspace
		repos     []string // workspace-relative ("$extra": the writable path)
	}{
		{
			name: "gitfile-swap",
			setup: func(t *testing.T, ws, _ string) {
				gitSetup(t, ws, "init", "-q", "--separate-git-dir="+filepath.Join(ws, ".realgit"), ".")
				gitSetup(t, ws, "commit", "-q", "--allow-empty", "-m", "one")
			},
			script: `git config core.fsmonitor "$fsm"; rm -rf evil; cp -r .realgit evil && git --git-dir=evil config core.fsmonitor "$fsm"; echo "gitdir: $PWD/evil" > .git; rm -f .git; echo "gitdir: $PWD/evil" > .git`,
			repos:  []string{"."},
		},
		{
			name:   "git-dir-replaced",
			script: `mv .git .git.old && cp -r .git.old .git; git config core.fsmonitor "$fsm"; mv .git .git.old2; mkdir .git && cp -r .git.old2/. .git/ && git config core.fsmonitor "$fsm"`,
			repos:  []string{"."},
		},
		{
			name: "separate-git-dir-in-plain-workspace",
			setup: func(t *testing.T, ws, _ string) {
				os.RemoveAll(filepath.Join(ws, ".git"))
			},
			script: `git init -q --separate-git-dir="$PWD/gd" . && git config core.fsmonitor "$fsm"`,
			repos:  []string{"."},
		},
		{
			name: "submodule-with-slash-name",
			setup: func(t *testing.T, ws, _ string) {
				gitSetup(t, ws, "submodule", "add", "-q", sandboxtest.GitWorkspace(t), "a/b")
				gitSetup(t, ws, "commit", "-q", "-m", "sub")
			},
			script: `git -C a/b config core.fsmonitor "$fsm"; mk .git/modules/a/b/hooks/pre-commit; mv .git/modules/a .git/modules/x && mkdir -p .git/modules/a && cp -r .git/modules/x/b .git/modules/a/b && git -C a/b config core.fsmonitor "$fsm"; mv .git/modules .git/m2 && cp -r .git/m2 .git/modules && git -C a/b config core.fsmonitor "$fsm"`,
			repos:  []string{"a/b"},
		},
		{
			name: "nested-repository",
			setup: func(t *testing.T, ws, _ string) {
				gitSetup(t, ws, "init", "-q", "sub")
				gitSetup(t, filepath.Join(ws, "sub"), "commit", "-q", "--allow-empty", "-m", "one")
			},
			script: `git -C sub config core.fsmonitor "$fsm"; mk sub/.git/hooks/pre-commit; mv sub/.git sub/.git.old && cp -r sub/.git.old sub/.git && git -C sub config core.fsmonitor "$fsm"; mv sub sub.old && mkdir sub && cp -r sub.old/.git sub/.git && git -C sub config core.fsmonitor "$fsm"`,
			repos:  []string{"sub"},
		},
		{
			name: "worktree-commondir-and-gitdir",
			setup: func(t *testing.T, ws, _ string) {
				gitSetup(t, ws, "worktree", "add", "-q", "wt")
			},
			script: `rm -rf evilgit; cp -r .git evilgit && git --git-dir=evilgit config core.fsmonitor "$fsm"; echo "$PWD/evilgit" > .git/worktrees/wt/commondir; echo "gitdir: $PWD/evilgit" > wt/.git; git -C wt config core.fsmonitor "$fsm"`,
			repos:  []string{"wt", "."},
		},
		{
			name: "include-path-target",
			setup: func(t *testing.T, ws, _ string) {
				must(t, os.WriteFile(filepath.Join(ws, "shared.gitconfig"), []byte("[user]\n\tname = shared\n"), 0o644))
				gitSetup(t, ws, "config", "include.path", "../shared.gitconfig")
				gitSetup(t, ws, "config", "includeIf.gitdir:"+ws+"/.git.path", "../later.gitconfig")
			},
			script: `printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> shared.gitconfig; printf '[core]\n\tfsmonitor = %s\n' "$fsm" > later.gitconfig`,
			repos:  []string{"."},
		},
		{
			name: "hooks-path-from-global-config",
			setup: func(t *testing.T, ws, _ string) {
				home := os.Getenv("HOME")
				must(t, os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
				must(t, os.MkdirAll(filepath.Join(ws, ".githooks"), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, ".githooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
			},
			script: `mk .githooks/pre-commit; mk .githooks/post-commit`,
			repos:  []string{"."},
		},
		{
			name: "husky-scripts",
			setup: func(t *testing.T, ws, _ string) {
				must(t, os.MkdirAll(filepath.Join(ws, ".husky", "_"), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, ".husky", "_", "pre-commit"), []byte("#!/bin/sh\n. \"$(dirname \"$0\")/../pre-commit\"\n"), 0o755))
				must(t, os.WriteFile(filepath.Join(ws, ".husky", "pre-commit"), []byte("true\n"), 0o644))
				gitSetup(t, ws, "config", "core.hooksPath", ".husky/_")
			},
			script: `mk .husky/pre-commit; mk .husky/post-commit`,
			repos:  []string{"."},
		},
		{
			name: "existing-bare-repository",
			setup: func(t *testing.T, ws, _ string) {
				must(t, os.MkdirAll(filepath.Join(ws, "fixtures"), 0o755))
				gitSetup(t, ws, "init", "-q", "--bare", "fixtures/repo.git")
			},
			script: `cd fixtures/repo.git && git config core.bare false; git config core.worktree ..; git config core.fsmonitor "$fsm"; mk hooks/pre-commit; mk hooks/post-commit`,
			repos:  []string{"fixtures/repo.git"},
		},
		{
			name:   "new-nested-repository",
			script: `mkdir -p deep/new && git init -q deep/new && git -C deep/new config core.fsmonitor "$fsm"; git init -q --separate-git-dir="$PWD/deep/gd" deep/other && git -C deep/other config core.fsmonitor "$fsm"`,
			repos:  []string{"deep/new", "deep/other"},
		},
		{
			name:   "fake-worktree-gitfile",
			script: `rm -rf evil; cp -r .git evil && git --git-dir=evil config core.fsmonitor "$fsm"; mkdir -p evil/worktrees/w sub && echo ../.. > evil/worktrees/w/commondir && cp .git/HEAD evil/worktrees/w/HEAD && echo "$PWD/sub/.git" > evil/worktrees/w/gitdir && echo "gitdir: $PWD/evil/worktrees/w" > sub/.git`,
			repos:  []string{"sub"},
		},
		{
			name:      "allow-write-repository",
			writeRoot: true,
			script:    `cd "$extra" && git config core.fsmonitor "$fsm"; mk .git/hooks/pre-commit; mv .git .git.old && cp -r .git.old .git && git config core.fsmonitor "$fsm"`,
			repos:     []string{"$extra"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			extra := sandboxtest.GitWorkspace(t)
			if tc.setup != nil {
				tc.setup(t, ws, extra)
			}
			sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) {
				if tc.writeRoot {
					s.Filesystem.Write = append(s.Filesystem.Write, extra)
				}
			})
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			var dirs []string
			for _, r := range tc.repos {
				if r == "$extra" {
					dirs = append(dirs, extra)
				} else {
					dirs = append(dirs, filepath.Join(ws, r))
				}
			}
			p := sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.script, marker, extra)}
			o := sb.Run(t, p)
			if hostGitRuns(marker, dirs) {
				t.Errorf("ATTACK SUCCEEDED: host git ran the program the run planted\n%s\ndenials %+v", o, o.Result.Denials)
			}
			sb.Host(t, p)
			if !hostGitRuns(marker, dirs) {
				t.Fatal("positive control failed: the script run on the host did not make host git run the marker program")
			}
		})
	}
}

// TestAttackGitStatusDuringRun: host git running while the run is still
// going (a shell prompt, an IDE) must not find a program the run planted
// in an existing repository, nor a repository the run made in a tree
// that had none (the workspace, a writable path): that tree's .git is a
// read-only placeholder for the run. The sandbox tries every route, then
// waits; the host runs `git status` meanwhile.
func TestAttackGitStatusDuringRun(t *testing.T) {
	const routes = `cp .git/config .git/config.new; printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> .git/config.new; mv .git/config.new .git/config; git config core.fsmonitor "$fsm"; printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> .git/config; mv .git .git.old && mkdir .git && cp -r .git.old/. .git/ && git config core.fsmonitor "$fsm"; `
	// In a tree with no .git: make a repository in place, after moving
	// or removing whatever holds the name.
	const plainRoutes = `rmdir .git; mv .git .git.old; rm -rf .git; git init -q . && git config core.fsmonitor "$fsm"; mkdir -p .git/hooks && cp -r /nonexistent .git 2>/dev/null; `
	for _, tc := range []struct {
		name  string
		plain bool
		// root: the attack is in a writable path (--allow-write) with no
		// .git, not in the workspace.
		root bool
	}{
		{name: "existing-repository"},
		{name: "plain-workspace", plain: true},
		{name: "plain-writable-root", plain: true, root: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			extra := sandboxtest.Workspace(t)
			script, dir := routes, ws
			if tc.plain {
				must(t, os.RemoveAll(filepath.Join(ws, ".git")))
				script = plainRoutes
			}
			var edit func(*profile.Spec)
			if tc.root {
				script, dir = `cd "$extra" && { `+plainRoutes+` }; cd "$OLDPWD"; `, extra
				edit = func(s *profile.Spec) { s.Filesystem.Write = append(s.Filesystem.Write, extra) }
			}
			sb := sandboxtest.New(t, preset, ws, edit)
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			ready := filepath.Join(ws, "ready")
			r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+script+`touch ready; sleep 30`, marker, extra)})
			for i := 0; i < 200 && !sandboxtest.Exists(ready); i++ {
				time.Sleep(50 * time.Millisecond)
			}
			if !sandboxtest.Exists(ready) {
				r.Kill()
				t.Fatalf("the run never got ready\n%s", r.Wait())
			}
			ran := hostGitRuns(marker, []string{dir})
			r.Kill()
			o := r.Wait()
			if ran {
				t.Errorf("ATTACK SUCCEEDED: host git status during the run ran the planted fsmonitor\n%s", o)
			}
			if tc.plain {
				// The run could not make a repository there, and said so;
				// the placeholder is gone once the run ended.
				if !strings.Contains(o.Output(), ".git") || o.Result.Status != sandbox.StatusCancelled {
					t.Errorf("git init in the run did not fail naming .git: %s", o)
				}
				if sandboxtest.Exists(filepath.Join(dir, ".git")) {
					t.Errorf("%s/.git is left after the run; denials %+v", dir, o.Result.Denials)
				}
			}
			os.Remove(ready)
			sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+script, marker, extra)})
			if !hostGitRuns(marker, []string{dir}) {
				t.Fatal("positive control failed: the routes run on the host did not make host git run the marker program")
			}
		})
	}
}

// TestAttackHostGitConfigDuringRun: a change the user makes on the host
// during the run (git config writes a new .git/config and renames it in
// place) is the user's, and stays.
func TestAttackHostGitConfigDuringRun(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	sb := sandboxtest.New(t, preset, ws, nil)
	r := sb.Start(t, sandboxtest.Probe{Args: sandboxtest.Sh(`touch ready; sleep 30`)})
	for i := 0; i < 200 && !sandboxtest.Exists(filepath.Join(ws, "ready")); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	gitSetup(t, ws, "config", "user.name", "changed-on-the-host")
	// The control: the host's change is there while the run goes on.
	if !strings.Contains(gitRun(ws, "config", "--file", ".git/config", "user.name"), "changed-on-the-host") {
		r.Kill()
		t.Fatal("positive control failed: git config on the host did not change .git/config")
	}
	r.Kill()
	o := r.Wait()
	if got := gitRun(ws, "config", "--file", ".git/config", "user.name"); !strings.Contains(got, "changed-on-the-host") {
		t.Errorf("the host's git config was undone by the run's end: user.name %q; denials %+v", got, o.Result.Denials)
	}
	if m, _ := filepath.Glob(filepath.Join(ws, ".git", "*airlock-quarantine*")); len(m) > 0 {
		t.Errorf("host-side change quarantined: %v", m)
	}
}
