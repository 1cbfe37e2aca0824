package sandbox_test

import (
	"os"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// TestAttacksUnprivileged re-runs every TestAttack* test as uid 65534
// (sandboxtest.RerunAsNobody). What only root can make for the run (a
// non-loopback address, a setuid binary owned by another user) is made
// here and handed over through the sandboxtest.Env* variables. The test
// fails if the unprivileged run does.
func TestAttacksUnprivileged(t *testing.T) {
	if sandboxtest.Unprivileged() {
		t.Skip("already unprivileged: this test re-runs the suite as uid 65534 from a root run")
	}
	// t.TempDir's parent is private to root, so the setuid binary gets a
	// directory of its own under the system temp directory, where uid
	// 65534 can run it.
	suid, err := os.MkdirTemp("", "airlock-unprivileged-suid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(suid) })
	must(t, os.Chmod(suid, 0o755))
	setuid := sandboxtest.MakeSetuidBinary(t, suid, 0)
	addr := sandboxtest.HostAddress(t)
	secrets := sandboxtest.SystemSecrets(t)
	ownFS := sandboxtest.MountOwnFilesystem(t, sandboxtest.NobodyUID)
	sandboxtest.RerunAsNobody(t, "^TestAttack",
		sandboxtest.EnvHostAddr+"="+addr,
		sandboxtest.EnvSetuidBinary+"="+setuid,
		sandboxtest.EnvSystemSecrets+"="+secrets,
		sandboxtest.EnvOwnFilesystem+"="+ownFS)
}
