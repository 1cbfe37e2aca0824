package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// nobodyTree is a directory tree for a test that runs airlock as uid
// 65534 (real users are not root): bin holds copies of the binaries it
// runs, where that user can reach them, and home and ws become its own.
type nobodyTree struct {
	root, bin, home, ws string
	setpriv             string
}

// newNobodyTree makes the tree under a new temporary directory named
// from prefix, copying each binary (source path → name in bin). It
// skips the test unless it runs as root with setpriv to drop to uid
// 65534.
func newNobodyTree(t *testing.T, prefix string, binaries map[string]string) nobodyTree {
	t.Helper()
	if sandboxtest.Unprivileged() {
		t.Skip("already unprivileged: the other tests are the unprivileged run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed; it is how the test drops to uid 65534")
	}
	root, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	n := nobodyTree{root: root, bin: filepath.Join(root, "bin"), home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), setpriv: setpriv}
	for _, d := range []string{root, n.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		// MkdirTemp makes root 0700, which uid 65534 cannot pass.
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for src, dst := range binaries {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(n.bin, dst), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{n.home, n.ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// own gives home, and ws with the policy written into it, to uid 65534;
// call it after writing the policy.
func (n nobodyTree) own(t *testing.T) {
	t.Helper()
	for _, p := range []string{n.home, n.ws, filepath.Join(n.ws, ".airlock"), filepath.Join(n.ws, ".airlock", "policy.toml")} {
		if err := os.Chown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID); err != nil {
			t.Fatal(err)
		}
	}
}

// command runs bin/name with args as uid 65534, with home as its HOME and
// its stderr in the test log.
func (n nobodyTree) command(t *testing.T, name string, args ...string) *exec.Cmd {
	argv := append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--", filepath.Join(n.bin, name)}, args...)
	cmd := exec.Command(n.setpriv, argv...)
	cmd.Env = []string{"PATH=" + sandboxtest.SystemPath, "HOME=" + n.home, "LANG=C.UTF-8"}
	cmd.Stderr = &testWriter{t: t}
	return cmd
}

// touchUntilUpdated calls the touch tool until a resources/updated
// notification arrives on updated and returns its URI ("" if none came
// after 50 tries). The newest protocol subscribes with a
// subscriptions/listen stream whose acknowledgement may come after
// Subscribe returns, so one touch may be too early.
func touchUntilUpdated(t *testing.T, cs *sdk.ClientSession, updated <-chan string) string {
	t.Helper()
	for i := 0; i < 50; i++ {
		call(t, cs, "touch", map[string]any{})
		select {
		case uri := <-updated:
			return uri
		case <-time.After(100 * time.Millisecond):
		}
	}
	return ""
}
