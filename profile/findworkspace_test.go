package profile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/profile"
)

func TestFindWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	home := mk("home")
	mk("home/.git") // a dotfiles checkout: never the workspace
	proj := mk("home/proj")
	mk("home/proj/.git")
	sub := mk("home/proj/src/pkg")
	nested := mk("home/proj/tools/x")
	mk("home/proj/tools/x/.airlock")
	loose := mk("home/scratch/a")
	outside := mk("srv/repo/deep")
	mk("srv/repo/.airlock")
	t.Setenv("HOME", home)
	for _, tc := range []struct{ dir, want string }{
		{sub, proj},
		{proj, proj},
		{nested, nested},
		{loose, loose}, // not $HOME, whose .git is a dotfiles repository
		{home, home},   // the caller's choice, as before discovery
		{outside, filepath.Join(root, "srv/repo")},
		{filepath.Join(root, "srv"), filepath.Join(root, "srv")},
	} {
		if got := profile.FindWorkspace(tc.dir); got != tc.want {
			t.Errorf("FindWorkspace(%s) = %s, want %s", tc.dir, got, tc.want)
		}
	}
	if got := profile.FindWorkspace(loose, "scratch"); got != home {
		// An extra marker counts like the built-in ones, but it is found in
		// home/ and home is never chosen; loose itself is the answer.
		if got != loose {
			t.Errorf("FindWorkspace with an extra marker = %s", got)
		}
	}
	mk("home/scratch/.claude")
	if got := profile.FindWorkspace(loose, ".claude"); got != filepath.Join(home, "scratch") {
		t.Errorf("FindWorkspace(%s, .claude) = %s, want %s", loose, got, filepath.Join(home, "scratch"))
	}
}
