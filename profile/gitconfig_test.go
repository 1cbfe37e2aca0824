package profile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestGitHooksPath(t *testing.T) {
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	// A plain repository.
	ws := filepath.Join(root, "plain")
	write(filepath.Join(ws, ".git", "config"), "[core]\n\tbare = false\n\thooksPath = .husky\n")
	if got := GitHooksPath(ws); got != ".husky" {
		t.Errorf("plain: %q, want .husky", got)
	}

	// A worktree: .git is a file; the common config names the hooks, the
	// worktree's config.worktree overrides it.
	main := filepath.Join(root, "main")
	wt := filepath.Join(root, "wt")
	write(filepath.Join(main, ".git", "config"), "[core]\n\thooksPath = tools/hooks\n")
	write(filepath.Join(main, ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(main, ".git", "worktrees", "wt")+"\n")
	if got := GitHooksPath(wt); got != "tools/hooks" {
		t.Errorf("worktree: %q, want tools/hooks", got)
	}
	write(filepath.Join(main, ".git", "worktrees", "wt", "config.worktree"), "[core]\n\thooksPath = wt-hooks\n")
	if got := GitHooksPath(wt); got != "wt-hooks" {
		t.Errorf("worktree with config.worktree: %q, want wt-hooks", got)
	}

	// Outside the workspace, the workspace itself, none: nothing.
	for _, v := range []string{"../elsewhere", ".", "~/hooks", "/etc/hooks"} {
		write(filepath.Join(ws, ".git", "config"), "[core]\n\thooksPath = "+v+"\n")
		if got := GitHooksPath(ws); got != "" {
			t.Errorf("hooksPath %q: %q, want none", v, got)
		}
	}

	// The profile gates writes there (IsProtected), and only there.
	write(filepath.Join(ws, ".git", "config"), "[core]\n\thooksPath = .husky\n")
	spec := Preset("workspace")
	spec.Workspace = ws
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Access(KindFilesystemWrite, filepath.Join(ws, ".husky", "pre-commit")); a != AccessGated {
		t.Errorf("write to the hooks path: %v, want gated", a)
	}
	if a := p.Access(KindFilesystemWrite, filepath.Join(ws, ".huskyrc")); a != AccessAllow {
		t.Errorf("write beside the hooks path: %v, want allow", a)
	}
}

func TestDeniedBeneath(t *testing.T) {
	spec := Preset("workspace")
	spec.Workspace = t.TempDir()
	p, err := New(spec)
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]bool{
		"/": true, "/etc": true, "/etc/ssh": true, "/etc/shadow": true, "/etc/sudoers.d/x": true,
		"/etc/apt": false, "/usr": false, spec.Workspace: false,
	} {
		if got := p.DeniedBeneath(dir) != ""; got != want {
			t.Errorf("DeniedBeneath(%s) = %v, want %v", dir, got, want)
		}
	}
}
