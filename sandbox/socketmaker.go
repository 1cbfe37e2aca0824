package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// socketMaker is one run's socket maker (sandbox/internal/linux/
// socketmaker.go): a process in the run's cgroup that makes the broker's
// host sockets, so that their buffers count against the run's memory
// budget. It starts at the first socket the broker needs and ends with
// the broker.
type socketMaker struct {
	cg interface{ Add(pid int) error }

	mu   sync.Mutex
	conn *os.File
	cmd  *exec.Cmd
	err  error // why it could not start; sockets are then not made
}

// socket returns a new non-blocking TCP socket of the family, charged to
// the run's cgroup.
func (m *socketMaker) socket(domain int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn == nil && m.err == nil {
		m.err = m.start()
	}
	if m.err != nil {
		return -1, m.err
	}
	if _, err := m.conn.Write([]byte{byte(domain)}); err != nil {
		return -1, fmt.Errorf("ask the socket maker: %w", err)
	}
	errno, fds, closed, err := guard.RecvRights(m.conn, 1)
	switch {
	case err != nil:
		return -1, fmt.Errorf("the socket maker's answer: %w", err)
	case closed:
		return -1, fmt.Errorf("the socket maker is gone")
	case errno != 0:
		guard.CloseAll(fds)
		return -1, unix.Errno(errno)
	case len(fds) != 1:
		guard.CloseAll(fds)
		return -1, fmt.Errorf("the socket maker sent %d descriptors", len(fds))
	}
	return fds[0], nil
}

func (m *socketMaker) start() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	conn, child := os.NewFile(uintptr(fds[0]), "socket-maker"), os.NewFile(uintptr(fds[1]), "socket-maker-child")
	defer child.Close()
	c := &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{linux.SocketMakerArg0},
		Env:         []string{"GOMAXPROCS=1"},
		ExtraFiles:  []*os.File{child},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := c.Start(); err != nil {
		conn.Close()
		return fmt.Errorf("start the socket maker: %w", err)
	}
	// Before it makes a socket: it waits for the first request.
	if err := m.cg.Add(c.Process.Pid); err != nil {
		c.Process.Kill()
		c.Wait()
		conn.Close()
		return fmt.Errorf("move the socket maker into the run's cgroup: %w", err)
	}
	m.conn, m.cmd = conn, c
	return nil
}

// close ends the maker and waits for it. Safe on nil and more than once.
func (m *socketMaker) close() {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		m.conn.Close()
		m.cmd.Process.Kill()
		m.cmd.Wait()
		m.cmd = nil
	}
	if m.err == nil {
		m.err = fmt.Errorf("the run has ended")
	}
}
