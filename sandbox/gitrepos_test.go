package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

// TestDiscoverGit: what the start of a run finds in a workspace holding a
// repository with a gitfile-linked worktree, a nested repository, a
// submodule whose name holds a slash, an include and a hooks directory
// named by the global config.
func TestDiscoverGit(t *testing.T) {
	ws, home := t.TempDir(), t.TempDir()
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=a", "-c", "user.email=a@b.c", "-c", "protocol.file.allow=always"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v\n%s", args, err, out)
		}
	}
	git(ws, "init", "-q", ".")
	git(ws, "commit", "-q", "--allow-empty", "-m", "one")
	git(ws, "worktree", "add", "-q", "wt")
	git(ws, "init", "-q", "nested")
	sub := t.TempDir()
	git(sub, "init", "-q", ".")
	git(sub, "commit", "-q", "--allow-empty", "-m", "one")
	git(ws, "submodule", "add", "-q", sub, "a/b")
	git(ws, "config", "include.path", "../inc.gitconfig")
	if err := os.WriteFile(filepath.Join(ws, "inc.gitconfig"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := discoverGit([]string{ws}, home, func(string) string { return "" }, ws, nil, false)
	j := func(p string) string { return filepath.Join(ws, p) }
	for _, want := range []string{".git/config", ".git/hooks", ".git/info", ".git/worktrees/wt/commondir", ".git/worktrees/wt/gitdir", "wt/.git", "nested/.git/config", ".git/modules/a/b/config", ".git/modules/a/b/hooks", "a/b/.git", "inc.gitconfig"} {
		if !slices.Contains(got.readOnly, j(want)) {
			t.Errorf("%s not read-only; read-only: %q", want, got.readOnly)
		}
	}
	for _, want := range []string{".git", ".git/modules", ".git/modules/a", ".git/modules/a/b", ".git/worktrees", ".git/worktrees/wt", "nested/.git"} {
		if !slices.Contains(got.pins, j(want)) {
			t.Errorf("%s not pinned; pins: %q", want, got.pins)
		}
	}
	for _, want := range []string{".githooks", "nested/.githooks", ".git/commondir"} {
		if !slices.Contains(got.absent, j(want)) {
			t.Errorf("%s not checked at the end; absent: %q", want, got.absent)
		}
	}
	if got.truncated {
		t.Error("a small workspace was truncated")
	}

	// Under the create guard only the tree's own repository is looked at
	// (its git directory, submodules, worktrees and what its configs
	// name); the nested one is left to the guard, and nothing is walked.
	guarded := discoverGit([]string{ws}, home, func(string) string { return "" }, ws, []string{".vscode"}, true)
	for _, want := range []string{".git/config", ".git/hooks", ".git/worktrees/wt/commondir", ".git/modules/a/b/config", "inc.gitconfig"} {
		if !slices.Contains(guarded.readOnly, j(want)) {
			t.Errorf("guarded: %s not read-only; read-only: %q", want, guarded.readOnly)
		}
	}
	for _, p := range append(append(guarded.readOnly, guarded.pins...), guarded.absent...) {
		if profile.Within(j("nested"), p) {
			t.Errorf("guarded: the start searched the workspace and found the nested repository: %s", p)
		}
	}
	if len(guarded.named) != 0 || guarded.truncated || !slices.Equal(guarded.dotgits, []string{j(".git")}) {
		t.Errorf("guarded: named %q, dotgits %q, truncated %v", guarded.named, guarded.dotgits, guarded.truncated)
	}
}

// BenchmarkDiscoverGit: the start-of-run cost of the walk on a tree of
// BENCH_TREE (default /usr/share, about the 50000-entry limit).
//
//	go test -run '^$' -bench DiscoverGit ./sandbox/
func BenchmarkDiscoverGit(b *testing.B) {
	tree := os.Getenv("BENCH_TREE")
	if tree == "" {
		tree = "/usr/share"
	}
	for b.Loop() {
		discoverGit([]string{tree}, "/nonexistent", func(string) string { return "" }, tree, nil, false)
	}
}
