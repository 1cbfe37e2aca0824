package linux

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// inMountNamespace runs f on a thread of its own in a private mount
// namespace (root only). The thread is never unlocked, so it ends with f
// and no other goroutine runs in that namespace.
func inMountNamespace(t *testing.T, f func() error) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test makes a mount namespace of its own")
	}
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_FS); err != nil {
			done <- err
			return
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
			done <- err
			return
		}
		done <- f()
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestMasker: a mask hides a file's and a directory's content, is
// read-only, nosuid and nodev, and lands where the target descriptor is,
// through a final symlink too (the view resolves targets that way).
func TestMasker(t *testing.T) {
	dir := t.TempDir()
	inMountNamespace(t, func() error {
		if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			return err
		}
		maskFile, maskDir := filepath.Join(dir, ".mask-file"), filepath.Join(dir, ".mask-dir")
		must := func(err error) {
			if err != nil {
				t.Error(err)
			}
		}
		must(os.WriteFile(maskFile, nil, 0o444))
		must(os.Mkdir(maskDir, 0o555))
		must(os.WriteFile(filepath.Join(dir, "secret"), []byte("secret"), 0o644))
		must(os.Mkdir(filepath.Join(dir, "private"), 0o755))
		must(os.WriteFile(filepath.Join(dir, "private", "key"), []byte("key"), 0o644))
		must(os.Mkdir(filepath.Join(dir, "private2"), 0o755))
		must(os.WriteFile(filepath.Join(dir, "private2", "key"), []byte("key"), 0o644))
		must(os.WriteFile(filepath.Join(dir, "linked"), []byte("linked"), 0o644))
		must(os.Symlink("linked", filepath.Join(dir, "link")))
		must(os.WriteFile(filepath.Join(dir, "other"), []byte("other"), 0o644))
		root, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(root)
		masks := masker{file: maskFile, dir: maskDir, placed: [2]int{-1, -1}}
		defer masks.close()
		// The second of each kind is a clone of the first: it must carry
		// the same flags.
		for _, tc := range []struct{ target, src, check string }{
			{"secret", maskFile, "secret"},
			{"private", maskDir, "private"},
			{"link", maskFile, "linked"},
			{"private2", maskDir, "private2"},
		} {
			fd, err := openIn(root, tc.target)
			if err != nil {
				return err
			}
			err = masks.mask(fd, tc.src == maskDir)
			unix.Close(fd)
			if err != nil {
				t.Errorf("mask %s: %v", tc.target, err)
				continue
			}
			path := filepath.Join(dir, tc.check)
			if tc.src == maskDir {
				if ents, err := os.ReadDir(path); err != nil || len(ents) != 0 {
					t.Errorf("%s: entries %v (%v), want the empty mask directory", tc.check, ents, err)
				}
			} else if data, err := os.ReadFile(path); err != nil || len(data) != 0 {
				t.Errorf("%s: %q (%v), want the empty mask file", tc.check, data, err)
			}
			var st unix.Statfs_t
			if err := unix.Statfs(path, &st); err != nil {
				return err
			}
			want := int64(unix.ST_RDONLY | unix.ST_NOSUID | unix.ST_NODEV)
			if st.Flags&want != want {
				t.Errorf("%s: mount flags %#x, want read-only, nosuid and nodev", tc.check, st.Flags)
			}
			if err := unix.Access(path, unix.W_OK); err != unix.EROFS {
				t.Errorf("%s: write access %v, want EROFS", tc.check, err)
			}
		}
		// Control: a file beside the masks still reads as before.
		if data, err := os.ReadFile(filepath.Join(dir, "other")); err != nil || string(data) != "other" {
			t.Errorf("other: %q (%v), want it untouched", data, err)
		}
		return unix.Unmount(dir, unix.MNT_DETACH)
	})
}
