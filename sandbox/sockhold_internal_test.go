package sandbox

import (
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestParentOf reads the parent of a real process whose command name
// holds the characters /proc/PID/stat puts around it.
func TestParentOf(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	odd := filepath.Join(t.TempDir(), "a) b (c")
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(odd, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for _, tc := range []struct {
		name      string
		pid, want int
	}{
		{"this test", os.Getpid(), os.Getppid()},
		{"a command named \"a) b (c\"", cmd.Process.Pid, os.Getpid()},
		{"no such process", 1 << 30, 0},
	} {
		if got := parentOf(tc.pid); got != tc.want {
			t.Errorf("%s: parentOf(%d) = %d, want %d", tc.name, tc.pid, got, tc.want)
		}
	}
}

// TestRunSockets finds a socket a child process holds, and only in the
// tree it belongs to.
func TestRunSockets(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine := os.NewFile(uintptr(fds[0]), "mine")
	theirs := os.NewFile(uintptr(fds[1]), "theirs")
	defer mine.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fds[1], &st); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	cmd.ExtraFiles = []*os.File{theirs}
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep(1): ", err)
	}
	theirs.Close()
	defer func() { cmd.Process.Kill(); cmd.Wait() }()

	open, complete := runSockets(cmd.Process.Pid)
	if !complete || !open[st.Ino] {
		t.Errorf("the child's tree: socket %d found %v (complete %v)", st.Ino, open[st.Ino], complete)
	}
	// The child's parent (this test) holds it no more, and its tree
	// includes the child.
	open, _ = runSockets(os.Getpid())
	if !open[st.Ino] {
		t.Errorf("this test's tree, which holds the child: socket %d not found", st.Ino)
	}
	if open, _ := runSockets(1 << 30); len(open) != 0 {
		t.Errorf("a process that does not exist holds %d sockets", len(open))
	}
}

// TestReleaseHostConn releases a real loopback connection the way its
// last close would have, and the peer sees what it would have seen.
func TestReleaseHostConn(t *testing.T) {
	for _, tc := range []struct {
		name     string
		prepare  func(t *testing.T, fd int, peer net.Conn)
		kept     bool
		peerSees string
	}{
		{"an idle connection sends its FIN", func(*testing.T, int, net.Conn) {}, true, "eof"},
		{"queued data reaches the peer before the FIN", func(t *testing.T, fd int, _ net.Conn) {
			if _, err := unix.Write(fd, []byte("queued")); err != nil {
				t.Fatal(err)
			}
		}, true, "queued+eof"},
		{"unread data resets", func(t *testing.T, fd int, peer net.Conn) {
			peer.Write([]byte("unread"))
			waitReadable(t, fd)
		}, false, "reset"},
		{"SO_LINGER 0 resets", func(t *testing.T, fd int, _ net.Conn) {
			if err := unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1}); err != nil {
				t.Fatal(err)
			}
		}, false, "reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, peer := loopbackPair(t)
			tc.prepare(t, fd, peer)
			kept, done := releaseHostConn(fd)
			if kept {
				defer unix.Close(fd)
			}
			if kept != tc.kept || !done {
				t.Errorf("releaseHostConn: kept %v, done %v; want kept %v, done", kept, done, tc.kept)
			}
			if got := peerEnd(peer); got != tc.peerSees {
				t.Errorf("the peer sees %q, want %q", got, tc.peerSees)
			}
		})
	}
}

// loopbackPair returns a connected TCP socket on the loopback and the
// peer's end of it.
func loopbackPair(t *testing.T) (int, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	f, err := c.(*net.TCPConn).File()
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	return fd, peer
}

func waitReadable(t *testing.T, fd int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, 10000); n != 1 || err != nil {
		t.Fatalf("the peer's data did not arrive: %v", err)
	}
}

// peerEnd reads the peer's side to its end: what it read, then "eof" or
// "reset".
func peerEnd(c net.Conn) string {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	data, err := io.ReadAll(c)
	out := ""
	if len(data) > 0 {
		out = string(data) + "+"
	}
	switch {
	case err == nil:
		return out + "eof"
	case errors.Is(err, syscall.ECONNRESET):
		return out + "reset"
	}
	return out + err.Error()
}
