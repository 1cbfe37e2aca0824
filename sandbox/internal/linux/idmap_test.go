package linux

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// Both ways of holding the id mapping's namespace give a user namespace
// other than the caller's: the traced child stopped at its exec, and the
// holder that runs until its stdin closes.
func TestRootlessUserns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the id mapping is made by root (a mapping of uid 0 needs CAP_SETUID in the parent namespace)")
	}
	var own unix.Stat_t
	if err := unix.Stat("/proc/self/ns/user", &own); err != nil {
		t.Fatal(err)
	}
	for _, traced := range []bool{true, false} {
		fd, err := rootlessUserns(traced)
		if err != nil {
			if traced {
				t.Logf("traced: %v (ptrace refused here; NewRootlessUserns falls back to the holder)", err)
				continue
			}
			t.Fatalf("holder: %v", err)
		}
		typ, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
		var st unix.Stat_t
		serr := unix.Fstat(fd, &st)
		unix.Close(fd)
		if err != nil || typ != unix.CLONE_NEWUSER {
			t.Errorf("traced=%v: descriptor's namespace type %#x, %v; want a user namespace", traced, typ, err)
		}
		if serr != nil || st.Ino == own.Ino {
			t.Errorf("traced=%v: the namespace is the caller's own (%v)", traced, serr)
		}
	}
}
