package sandbox_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// mustGit runs git on the host and fails the test if it fails.
func mustGit(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=host", "-c", "user.email=host@test.invalid"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestAttackLocalClone: a repository cloned from a local path shares its
// objects with the source by hard links, and every file of the workspace
// with links outside it was masked, so every git command in the sandbox
// failed on a masked .pack. Such files are no secret (git makes them
// 0444): they are readable now, and read-only, since a write through the
// workspace would change the source repository too. Evidence: git log
// and status work in the sandbox as on the host (the control); the
// source's pack is byte for byte the same after the sandbox tried to
// append to it.
func TestAttackLocalClone(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	src := filepath.Join(sandboxtest.Workspace(t), "src")
	mustGit(t, "/", "init", "-q", src)
	must(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644))
	mustGit(t, src, "add", "a.txt")
	mustGit(t, src, "commit", "-q", "-m", "first")
	mustGit(t, src, "gc", "-q")
	mustGit(t, sb.Workspace, "clone", "-q", src, "clone")
	packs, _ := filepath.Glob(filepath.Join(src, ".git", "objects", "pack", "*.pack"))
	if len(packs) == 0 {
		t.Fatal("git gc made no pack")
	}
	before, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cd clone && git log --oneline && git status --porcelain && git fsck --no-progress && echo GIT-OK`)})
	if !strings.Contains(o.Stdout, "first") || !strings.Contains(o.Stdout, "GIT-OK") {
		t.Errorf("git fails in a local clone in the sandbox:\n%s", o)
	}
	if d := enforced(o.Result); len(d) != 0 {
		t.Errorf("git in a local clone was refused: %+v", d)
	}
	// The attack: make the shared pack writable, append to it, truncate it.
	o = sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cd clone
for f in .git/objects/pack/*.pack; do chmod u+w "$f" 2>/dev/null; echo tampered >> "$f" 2>/dev/null && echo WROTE-PACK; : > "$f" 2>/dev/null && echo TRUNCATED-PACK
python3 -c 'import os, sys; os.truncate(sys.argv[1], 0); print("TRUNCATED-PACK")' "$f" 2>/dev/null; done; true`)})
	if strings.Contains(o.Stdout, "WROTE-PACK") || strings.Contains(o.Stdout, "TRUNCATED-PACK") {
		t.Errorf("ATTACK SUCCEEDED: the sandbox wrote a pack file it shares with the source repository\n%s", o)
	}
	if after, err := os.ReadFile(packs[0]); err != nil || !bytes.Equal(before, after) {
		t.Errorf("ATTACK SUCCEEDED: the source repository's pack changed (%v)", err)
	}
	if fi, err := os.Stat(packs[0]); err != nil || fi.Mode().Perm()&0o200 != 0 {
		t.Errorf("ATTACK SUCCEEDED: the source repository's pack was made writable (%v, %v)", fi.Mode(), err)
	}
	// Control: the same on the host reads the clone (the write, which
	// would change the source, is not tried there).
	c := exec.Command("git", "log", "--oneline")
	c.Dir = filepath.Join(sb.Workspace, "clone")
	if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "first") {
		t.Fatalf("control: git log on the host: %v\n%s", err, out)
	}
}

// TestAttackHardLinkToSecret: a hard link in the workspace to a secret
// kept elsewhere (a 0600 key: no other user may read it) stays masked,
// while one to a world-readable file is readable and read-only. Evidence:
// the key's value never appears in the output; the shared file outside
// is unchanged after the sandbox tried to write it; the control reads the
// key through the link on the host.
func TestAttackHardLinkToSecret(t *testing.T) {
	sb, secrets := attackTarget(t, nil)
	link := filepath.Join(sb.Workspace, "key")
	if err := os.Link(secrets.SSHKey, link); err != nil {
		t.Skipf("cannot hard-link the planted key into the workspace (another filesystem?): %v", err)
	}
	outside := filepath.Join(sandboxtest.Workspace(t), "shared.txt")
	must(t, os.WriteFile(outside, []byte("shared\n"), 0o644))
	must(t, os.Link(outside, filepath.Join(sb.Workspace, "shared.txt")))
	p := sandboxtest.Probe{Args: sandboxtest.Sh(`cat key; cat shared.txt; echo planted >> shared.txt 2>/dev/null && echo WROTE-SHARED; true`)}
	requireControl(t, sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(`cat key`)}), secrets.Value)
	o := sb.Run(t, p)
	requireNotIn(t, o, secrets.Value)
	if !strings.Contains(o.Stdout, "shared") {
		t.Errorf("a hard link to a world-readable file is not readable:\n%s", o)
	}
	if data, _ := os.ReadFile(outside); string(data) != "shared\n" || strings.Contains(o.Stdout, "WROTE-SHARED") {
		t.Errorf("ATTACK SUCCEEDED: the sandbox wrote a file outside the workspace through a hard link: %q\n%s", data, o)
	}
}
