package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// TestAttackNestedRepositoryAtCallTime: with the create guard the start
// of a run no longer searches the workspace for repositories; what host
// git reads of a nested one is found when a call comes. Each case is a
// route to make host git in the nested repository run the run's program
// without making a .git: a hooks directory its config names (there, or
// absent), an include target, a hook made executable, a second name for
// its config, a HEAD moved away to make the directory look like an
// ordinary one, and a rebase with an exec line. The evidence is host git
// itself after the run; the control runs the same script on the host.
func TestAttackNestedRepositoryAtCallTime(t *testing.T) {
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, repo string)
		script string // after gitPrelude, in the nested repository
		files  []string
	}{
		{
			name: "hooks-path-present",
			setup: func(t *testing.T, repo string) {
				gitSetup(t, repo, "config", "core.hooksPath", ".githooks")
				must(t, os.MkdirAll(filepath.Join(repo, ".githooks"), 0o755))
				must(t, os.WriteFile(filepath.Join(repo, ".githooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
			},
			script: `mk .githooks/pre-commit; mk .githooks/post-commit; python3 -c 'import sys; open(".githooks/pre-commit", "r+").write("#!/bin/sh\ntouch " + sys.argv[1] + "\n")' "$m"; mv .githooks .gh && mk .gh/post-commit && mv .gh .githooks`,
			files:  []string{".githooks/pre-commit", ".githooks/post-commit"},
		},
		{
			name: "hooks-path-absent",
			setup: func(t *testing.T, repo string) {
				gitSetup(t, repo, "config", "core.hooksPath", "tools/hooks")
			},
			script: `mk tools/hooks/post-commit; mkdir -p tools/x && mk tools/x/post-commit && mv tools/x tools/hooks`,
			files:  []string{"tools/hooks/post-commit"},
		},
		{
			name: "hooks-path-from-global-config",
			setup: func(t *testing.T, repo string) {
				must(t, os.WriteFile(filepath.Join(os.Getenv("HOME"), ".gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644))
				must(t, os.MkdirAll(filepath.Join(repo, ".githooks"), 0o755))
				must(t, os.WriteFile(filepath.Join(repo, ".githooks", "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755))
			},
			script: `mk .githooks/pre-commit; mk .githooks/post-commit`,
			files:  []string{".githooks/pre-commit", ".githooks/post-commit"},
		},
		{
			name: "include-target",
			setup: func(t *testing.T, repo string) {
				must(t, os.WriteFile(filepath.Join(repo, "inc.gitconfig"), []byte("[user]\n\tname = nested\n"), 0o644))
				gitSetup(t, repo, "config", "include.path", "../inc.gitconfig")
			},
			script: `printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> inc.gitconfig; python3 -c 'import sys; f = open("inc.gitconfig", "r+"); f.seek(0, 2); f.write("[core]\n\tfsmonitor = " + sys.argv[1] + "\n")' "$fsm"`,
			files:  []string{"inc.gitconfig"},
		},
		{
			name: "hook-made-executable",
			setup: func(t *testing.T, repo string) {
				// A disabled hook of the user's that would run the marker.
				must(t, os.WriteFile(filepath.Join(repo, ".git", "hooks", "post-commit"), []byte("#!/bin/sh\ntouch \"$MARKER\"\n"), 0o644))
			},
			script: `chmod +x .git/hooks/post-commit; python3 -c 'import os; fd = os.open(".git/hooks/post-commit", os.O_RDONLY); os.fchmod(fd, 0o755)'`,
			files:  []string{".git/hooks/post-commit"},
		},
		{
			name:   "second-name-for-the-config",
			script: `ln .git/config ../cfg && printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> ../cfg; ln .git/hooks ../hk; mv .git/config ../moved && printf '[core]\n\tfsmonitor = %s\n' "$fsm" > .git/config`,
			files:  []string{".git/config"},
		},
		{
			// Without its HEAD the directory is no git directory for a
			// moment; its objects and refs still say it is one. (The run
			// cannot put the HEAD back: the control does.)
			name:   "head-moved-away",
			script: `mv .git/HEAD ../head && printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> .git/config; mv ../head .git/HEAD`,
			files:  []string{".git/config"},
		},
		{
			name:   "refs-removed",
			script: `cp -r .git/refs ../refs; rm -rf .git/refs && printf '[core]\n\tfsmonitor = %s\n' "$fsm" >> .git/config; cp -r ../refs .git/`,
			files:  []string{".git/config"},
		},
		{
			name:   "rebase-exec-line",
			script: `mkdir -p .git/rebase-merge && echo "exec $fsm" > .git/rebase-merge/git-rebase-todo && echo refs/heads/main > .git/rebase-merge/head-name && git rev-parse HEAD > .git/rebase-merge/onto; git rev-parse HEAD > .git/rebase-merge/orig-head; touch .git/rebase-merge/interactive`,
			files:  []string{".git/rebase-merge"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sandboxtest.PlantSecrets(t)
			ws := sandboxtest.GitWorkspace(t)
			repo := filepath.Join(ws, "deep", "sub")
			must(t, os.MkdirAll(repo, 0o755))
			gitSetup(t, repo, "init", "-q", "-b", "main", ".")
			gitSetup(t, repo, "commit", "-q", "--allow-empty", "-m", "one")
			gitSetup(t, ws, "config", "status.showUntrackedFiles", "no")
			if tc.setup != nil {
				tc.setup(t, repo)
			}
			sb := sandboxtest.New(t, preset, ws, nil)
			if sb.Degraded(profile.ProtectedPaths) {
				t.Skip("no create guard on this host")
			}
			before := map[string]string{}
			for _, f := range tc.files {
				before[f] = fileState(filepath.Join(repo, f))
			}
			marker := filepath.Join(sandboxtest.OutsideDir(t), "ran")
			t.Setenv("MARKER", marker)
			p := sandboxtest.Probe{Args: sandboxtest.Sh(gitPrelude+tc.script, marker), Dir: repo}
			o := sb.Run(t, p)
			for _, f := range tc.files {
				if got := fileState(filepath.Join(repo, f)); got != before[f] {
					t.Errorf("ATTACK SUCCEEDED: %s changed on the host: %s, was %s\n%s", f, got, before[f], o)
				}
			}
			if hostGitRuns(marker, []string{repo}) || strings.Contains(gitRun(repo, "status"), "rebase") && rebaseRuns(repo, marker) {
				t.Errorf("ATTACK SUCCEEDED: host git in the nested repository ran the program the run planted\n%s", o)
			}
			if len(o.Result.Denials) == 0 {
				t.Errorf("no denial names what was refused\n%s", o)
			}
			if st := statusOf(o.Result.Guarantees, profile.ProtectedPaths); st.Status != sandbox.Enforced {
				t.Errorf("protected-paths in the run: %+v", st)
			}

			// Control: the same script on the host makes host git run
			// the marker.
			os.RemoveAll(filepath.Join(ws, "deep", "cfg"))
			os.RemoveAll(filepath.Join(ws, "deep", "refs"))
			if sandboxtest.Exists(filepath.Join(ws, "deep", "head")) {
				must(t, os.Rename(filepath.Join(ws, "deep", "head"), filepath.Join(repo, ".git", "HEAD")))
			}
			sb.Host(t, p)
			if !hostGitRuns(marker, []string{repo}) && !rebaseRuns(repo, marker) {
				t.Fatal("positive control failed: the script on the host did not make host git run the marker")
			}
		})
	}
}

// rebaseRuns reports whether `git rebase --continue` on the host in repo
// touches marker.
func rebaseRuns(repo, marker string) bool {
	os.Remove(marker)
	gitRun(repo, "rebase", "--continue")
	return sandboxtest.Exists(marker)
}

// fileState is what a host path looks like: absent, a directory's
// names, or a file's mode and content.
func fileState(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "absent"
	}
	if fi.IsDir() {
		entries, _ := os.ReadDir(path)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return fmt.Sprint("dir ", names)
	}
	return fmt.Sprint(fi.Mode(), " ", sandboxtest.FileState(path))
}

// TestAttackNodeModulesWorkspace: a workspace the size of a real
// node_modules (100,000 files) with a nested repository beneath it keeps
// protected-paths enforced: nothing at the start or the end is searched,
// and the nested repository's config, opened r+ by the run, stays as it
// was. Ordinary writes in the big tree work.
func TestAttackNodeModulesWorkspace(t *testing.T) {
	ws := sandboxtest.GitWorkspace(t)
	for i := 0; i < 1000; i++ {
		d := filepath.Join(ws, "node_modules", fmt.Sprintf("pkg%04d", i))
		must(t, os.MkdirAll(d, 0o755))
		for j := 0; j < 100; j++ {
			f, err := os.Create(filepath.Join(d, fmt.Sprintf("f%02d.js", j)))
			must(t, err)
			f.Close()
		}
	}
	repo := filepath.Join(ws, "node_modules", "pkg0999", "vendored")
	must(t, os.MkdirAll(repo, 0o755))
	gitSetup(t, repo, "init", "-q", ".")
	cfg := filepath.Join(repo, ".git", "config")
	before := sandboxtest.FileState(cfg)
	sb := sandboxtest.New(t, preset, ws, func(s *profile.Spec) { s.Require = append(s.Require, profile.ProtectedPaths.String()) })
	if sb.Degraded(profile.ProtectedPaths) {
		t.Skip("no create guard on this host")
	}
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Py(`
import sys
try:
    open(sys.argv[1], "r+").write("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    print("config written")
except OSError as e:
    print("config refused", e.errno)
open("node_modules/pkg0500/f00.js", "r+").write("ordinary")
`, cfg)})
	if st := statusOf(o.Result.Guarantees, profile.ProtectedPaths); st.Status != sandbox.Enforced {
		t.Errorf("protected-paths in a 100,000-file workspace: %+v", st)
	}
	if got := sandboxtest.FileState(cfg); got != before || !strings.Contains(o.Stdout, "config refused 1") {
		t.Errorf("ATTACK SUCCEEDED: the nested repository's config in node_modules changed: %s\n%s", got, o)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "node_modules", "pkg0500", "f00.js")); string(b) != "ordinary" {
		t.Errorf("positive control failed: an ordinary file in the big tree reads %q\n%s", b, o)
	}
}
