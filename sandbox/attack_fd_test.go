package sandbox_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
)

// inheritable makes fd a descriptor of this process that every exec
// inherits (as a shell's "exec 7>>file" or a make jobserver's pipe
// would be), at a number of its own from 40 up, and closes it when the
// test ends. It returns the new number; fd itself is closed.
func inheritable(t *testing.T, fd int) int {
	t.Helper()
	n, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD, 40) // F_DUPFD: no close-on-exec
	if err != nil {
		t.Fatalf("dup: %v", err)
	}
	unix.Close(fd)
	t.Cleanup(func() { unix.Close(n) })
	return n
}

// Descriptors the caller of the sandbox holds without close-on-exec must
// not reach the command: an append-only file outside every view, a
// jobserver-like pipe, and a directory outside the view used with openat.
// Each probe runs in the sandbox first, then on the host, where it must
// succeed (the positive control: the descriptor does reach an ordinary
// child).
func TestAttackInheritedDescriptors(t *testing.T) {
	sb, _ := attackTarget(t, nil)
	outside := sandboxtest.OutsideDir(t)

	t.Run("append-file", func(t *testing.T) {
		log := filepath.Join(outside, "host.log")
		must(t, os.WriteFile(log, []byte("host\n"), 0o644))
		fd, err := unix.Open(log, unix.O_WRONLY|unix.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := inheritable(t, fd)
		p := sandboxtest.Probe{Args: sandboxtest.Py(`import os, sys
os.write(int(sys.argv[1]), b"pwned\n")`, strconv.Itoa(n))}
		before := sandboxtest.FileState(log)
		o := sb.Run(t, p)
		if after := sandboxtest.FileState(log); after != before {
			t.Errorf("the command wrote to a host file through inherited fd %d: %s", n, o)
		}
		sb.Host(t, p)
		if sandboxtest.FileState(log) == before {
			t.Fatal("control: the host probe did not write through the inherited descriptor; the test proves nothing")
		}
	})

	t.Run("jobserver-pipe", func(t *testing.T) {
		var fds [2]int
		must(t, unix.Pipe2(fds[:], 0))
		r, w := inheritable(t, fds[0]), inheritable(t, fds[1])
		must(t, unix.SetNonblock(r, true))
		if _, err := unix.Write(w, []byte("+")); err != nil { // one job token
			t.Fatal(err)
		}
		pending := func() string {
			buf := make([]byte, 64)
			k, _ := unix.Read(r, buf)
			if k > 0 {
				return string(buf[:k])
			}
			return ""
		}
		p := sandboxtest.Probe{Args: sandboxtest.Py(`import os, sys
os.read(int(sys.argv[1]), 1)
os.write(int(sys.argv[2]), b"stolen")`, strconv.Itoa(r), strconv.Itoa(w))}
		o := sb.Run(t, p)
		if got := pending(); got != "+" {
			t.Errorf("the pipe holds %q after the run, want the token \"+\" untouched: %s", got, o)
		}
		if _, err := unix.Write(w, []byte("+")); err != nil {
			t.Fatal(err)
		}
		sb.Host(t, p)
		if got := pending(); got != "stolen" {
			t.Fatalf("control: the host probe left %q in the pipe, want \"stolen\"; the test proves nothing", got)
		}
	})

	// Whatever the run's hand-offs (config, error pipe, deny watch), the
	// command starts with the standard streams and nothing else.
	t.Run("only-standard-streams", func(t *testing.T) {
		deny := sandboxtest.New(t, preset, sandboxtest.Workspace(t), func(s *profile.Spec) {
			s.Filesystem.Deny = append(s.Filesystem.Deny, "**/*.secret")
		})
		p := sandboxtest.Probe{Args: sandboxtest.Py(`import os
def is_open(fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
print("open", *[fd for fd in range(4096) if is_open(fd)])`)}
		for _, box := range []*sandboxtest.Sandbox{sb, deny} {
			if o := box.Run(t, p); o.Stdout != "open 0 1 2\n" {
				t.Errorf("the command started with more than the standard streams: %s", o)
			}
		}
	})

	t.Run("directory-openat", func(t *testing.T) {
		dir := filepath.Join(outside, "tree")
		must(t, os.Mkdir(dir, 0o755))
		fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := inheritable(t, fd)
		planted := filepath.Join(dir, "planted")
		p := sandboxtest.Probe{Args: sandboxtest.Py(`import os, sys
f = os.open("planted", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=int(sys.argv[1]))
os.write(f, b"pwned")`, strconv.Itoa(n))}
		o := sb.Run(t, p)
		if sandboxtest.Exists(planted) {
			t.Errorf("the command created %s through inherited directory fd %d: %s", planted, n, o)
		}
		must(t, os.RemoveAll(planted))
		sb.Host(t, p)
		if !sandboxtest.Exists(planted) {
			t.Fatal("control: the host probe did not create the file through the inherited descriptor; the test proves nothing")
		}
	})
}
