package sandboxtest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// RerunAsNobody re-runs the tests of the current test binary that match
// run as uid 65534: the binary is copied where that user can execute it
// and started under setpriv, with HOME and TMPDIR in a directory that
// user owns, and env added to its environment (what the root parent made
// for it, such as a listener's address). It fails t when the unprivileged run fails or passes no
// test, and skips when already unprivileged or without setpriv.
func RerunAsNobody(t *testing.T, run string, env ...string) {
	t.Helper()
	if Unprivileged() {
		t.Skip("already unprivileged: this test re-runs the suite as uid 65534 from a root run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed; it is how the suite drops to uid 65534")
	}
	root, err := os.MkdirTemp("", "airlock-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	home, tmp, bin := filepath.Join(root, "home"), filepath.Join(root, "tmp"), filepath.Join(root, "bin")
	for _, d := range []string{home, tmp, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{home, tmp} {
		if err := os.Chown(d, NobodyUID, NobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	test := filepath.Join(bin, filepath.Base(os.Args[0]))
	if err := copyExecutable(os.Args[0], test); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
		test, "-test.run", run, "-test.v", "-test.count=1", "-test.timeout=15m")
	cmd.Dir = tmp
	cmd.Env = append([]string{"PATH=" + SystemPath, "HOME=" + home, "TMPDIR=" + tmp, "LANG=C.UTF-8", EnvAsNobody + "=1"}, env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s as uid 65534:\n%s", run, out)
	if err != nil {
		t.Fatalf("the tests %s failed as uid 65534: %v (failures: %q)", run, err, failLine.FindAllString(string(out), -1))
	}
	if !strings.Contains(string(out), "--- PASS: ") {
		t.Fatalf("the unprivileged run of %s passed no test", run)
	}
}

var failLine = regexp.MustCompile(`--- FAIL: \S+`)

func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
