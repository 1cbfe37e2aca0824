package linux

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Every way of holding the id mapping's namespace gives a user namespace
// other than the caller's, with the rootless mapping: the small holder
// (a vfork that unshares after its exec), the traced child stopped at its
// exec, and the holder that runs until its stdin closes. Evidence of the
// mapping: /etc id-mapped through the namespace shows root's
// /etc/passwd as nobody's.
func TestRootlessUserns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the id mapping is made by root (a mapping of uid 0 needs CAP_SETUID in the parent namespace)")
	}
	var own unix.Stat_t
	if err := unix.Stat("/proc/self/ns/user", &own); err != nil {
		t.Fatal(err)
	}
	var passwd unix.Stat_t
	if err := unix.Lstat("/etc/passwd", &passwd); err != nil || passwd.Uid != 0 {
		t.Fatalf("the evidence needs a root-owned /etc/passwd: %+v, %v", passwd, err)
	}
	for _, tc := range []struct {
		name     string
		make     func() (int, error)
		optional bool
	}{
		{"small holder", smallHolderUserns, holderCode == nil},
		{"traced", func() (int, error) { return rootlessUserns(true) }, true},
		{"holder", func() (int, error) { return rootlessUserns(false) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := tc.make()
			if err != nil {
				if tc.optional {
					t.Skipf("%v (NewRootlessUserns falls back to the next way)", err)
				}
				t.Fatal(err)
			}
			defer unix.Close(fd)
			typ, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
			if err != nil || typ != unix.CLONE_NEWUSER {
				t.Errorf("descriptor's namespace type %#x, %v; want a user namespace", typ, err)
			}
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil || st.Ino == own.Ino {
				t.Errorf("the namespace is the caller's own (%v)", err)
			}
			tree, err := IDMappedTree("/etc", fd, Mount{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(tree)
			var mapped unix.Stat_t
			if err := unix.Fstatat(tree, "passwd", &mapped, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				t.Fatal(err)
			}
			if mapped.Uid != nobody || mapped.Gid != nobody {
				t.Errorf("root's /etc/passwd shows as %d:%d through the namespace, want %d:%d (nobody)", mapped.Uid, mapped.Gid, nobody, nobody)
			}
		})
	}
}
