package sandboxtest

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// EnvOwnFilesystem is a directory on a tmpfs of its own that the root
// parent mounted for the unprivileged run and gave to uid 65534
// (MountOwnFilesystem).
const EnvOwnFilesystem = "AIRLOCK_TEST_OWN_FS"

// ownFilesystemSize bounds each filesystem MountOwnFilesystem makes; it
// is memory, and only what the test writes uses any.
const ownFilesystemSize = "1g"

// MountOwnFilesystem mounts a tmpfs of its own (root only), owned by
// uid, and unmounts it when t ends. A write budget counts what the
// filesystems holding the paths lose (sandbox/writebudget.go), so space
// that other processes free on a shared disk during the run (another
// package's tests removing their temporary directories, a journal
// committing earlier deletions) offsets what the run adds; a test that
// judges the workspace's growth against the budget must measure on a
// filesystem nothing else uses.
func MountOwnFilesystem(t testing.TB, uid int) string {
	t.Helper()
	if Unprivileged() {
		t.Fatal("MountOwnFilesystem needs root")
	}
	dir, err := os.MkdirTemp("", "airlock-ownfs-")
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+ownFilesystemSize+",mode=0755"); err != nil {
		os.Remove(dir)
		t.Fatalf("mount a tmpfs at %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
		os.Remove(dir)
	})
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// OwnFilesystemWorkspace returns a workspace on a filesystem no other
// process writes to: a tmpfs mounted for this test as root, the one the
// root parent handed over (EnvOwnFilesystem) as uid 65534. Without
// either it fails the test rather than measure on a shared disk.
func OwnFilesystemWorkspace(t testing.TB) string {
	t.Helper()
	parent := os.Getenv(EnvOwnFilesystem)
	if !Unprivileged() {
		parent = MountOwnFilesystem(t, os.Getuid())
	} else if parent == "" {
		t.Fatalf("%s is not set: the root parent mounts the filesystem the unprivileged run measures on (MountOwnFilesystem)", EnvOwnFilesystem)
	}
	dir, err := os.MkdirTemp(parent, "ws-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir, err = filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
