package sandbox_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestAttacksUnprivileged re-runs every TestAttack* test as uid 65534:
// the compiled test binary, copied where that user can execute it, under
// setpriv, with HOME and TMPDIR in a directory that user owns. What only
// root can make for the run (a non-loopback address, a setuid binary
// owned by another user) is made here and handed over through the
// sandboxtest.Env* variables. The test fails if the unprivileged run does.
func TestAttacksUnprivileged(t *testing.T) {
	if sandboxtest.Unprivileged() {
		t.Skip("already unprivileged: this test re-runs the suite as uid 65534 from a root run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed; it is how the suite drops to uid 65534")
	}

	// t.TempDir's parent is private to root, so the run gets a directory
	// of its own under the system temp directory.
	root, err := os.MkdirTemp("", "airlock-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	must(t, os.Chmod(root, 0o755))
	home, tmp, bin, suid := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "bin"), filepath.Join(root, "suid")
	for _, d := range []string{home, tmp} {
		must(t, os.Mkdir(d, 0o700))
		must(t, os.Chown(d, sandboxtest.NobodyUID, sandboxtest.NobodyUID))
	}
	for _, d := range []string{bin, suid} {
		must(t, os.Mkdir(d, 0o755))
	}
	test := filepath.Join(bin, filepath.Base(os.Args[0]))
	copyFile(t, os.Args[0], test, 0o755)
	setuid := sandboxtest.MakeSetuidBinary(t, suid, 0)
	addr := sandboxtest.HostAddress(t)
	secrets := sandboxtest.SystemSecrets(t)

	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
		test, "-test.run", "^TestAttack", "-test.v", "-test.count=1", "-test.timeout=15m")
	cmd.Dir = tmp
	cmd.Env = []string{
		"PATH=" + sandboxtest.SystemPath,
		"HOME=" + home,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
		sandboxtest.EnvAsNobody + "=1",
		sandboxtest.EnvHostAddr + "=" + addr,
		sandboxtest.EnvSetuidBinary + "=" + setuid,
		sandboxtest.EnvSystemSecrets + "=" + secrets,
	}
	out, err := cmd.CombinedOutput()
	t.Logf("the suite as uid 65534:\n%s", out)
	if err != nil {
		t.Fatalf("the attack suite failed as uid 65534: %v (failures: %q)", err, failures(string(out)))
	}
	if !strings.Contains(string(out), "--- PASS: TestAttack") {
		t.Fatal("the unprivileged run passed no attack test")
	}
}

var failLine = regexp.MustCompile(`--- FAIL: \S+`)

func failures(out string) []string { return failLine.FindAllString(out, -1) }

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	must(t, out.Close())
}
